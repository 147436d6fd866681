#include "datasets/mulan_xml.hpp"

#include <algorithm>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "datasets/line_reader.hpp"
#include "datasets/parse_error.hpp"
#include "datasets/tokens.hpp"

namespace lobench::data {

namespace {

bool is_xml_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view local_name(std::string_view qname) {
  const size_t colon = qname.rfind(':');
  return colon == std::string_view::npos ? qname : qname.substr(colon + 1);
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class XmlScanner {
 public:
  XmlScanner(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  std::vector<XmlLabel> run() {
    std::vector<XmlLabel> labels;
    std::map<std::string, int64_t> seen;  // name -> line of first listing
    std::vector<std::string> open;        // element stack
    bool root_seen = false;
    while (true) {
      const size_t lt = text_.find('<', pos_);
      if (lt == std::string_view::npos) {
        check_text(text_.substr(pos_));
        advance_to(text_.size());
        break;
      }
      check_text(text_.substr(pos_, lt - pos_));
      advance_to(lt);
      const std::string_view rest = text_.substr(pos_);
      if (rest.starts_with("<?")) {
        skip_past("?>", "'?>' closing the declaration");
      } else if (rest.starts_with("<!--")) {
        skip_past("-->", "'-->' closing the comment");
      } else if (rest.starts_with("<![CDATA[")) {
        fail("expected elements only, got a CDATA section");
      } else if (rest.starts_with("<!")) {
        skip_past(">", "'>' closing the declaration");
      } else if (rest.starts_with("</")) {
        advance_to(pos_ + 2);
        const std::string name(read_name());
        skip_space();
        expect('>');
        if (open.empty() || open.back() != name) {
          fail(fmt::format("expected {}, got '</{}>'",
                           open.empty() ? std::string("no end tag") : fmt::format("'</{}>'", open.back()), name));
        }
        open.pop_back();
      } else {
        const int64_t tag_line = line_;
        advance_to(pos_ + 1);
        const std::string name(read_name());
        if (name.empty()) fail("expected an element name after '<'");
        std::map<std::string, std::string> attrs;
        bool self_closing = false;
        while (true) {
          skip_space();
          if (at_end()) fail(fmt::format("expected '>' closing <{}> (truncated file?)", name));
          if (text_[pos_] == '>') {
            advance_to(pos_ + 1);
            break;
          }
          if (text_.substr(pos_).starts_with("/>")) {
            advance_to(pos_ + 2);
            self_closing = true;
            break;
          }
          const std::string attr(read_name());
          if (attr.empty()) fail(fmt::format("expected an attribute name in <{}>, got '{}'", name, text_[pos_]));
          skip_space();
          expect('=');
          skip_space();
          attrs[std::string(local_name(attr))] = read_quoted();
        }
        const std::string_view local = local_name(name);
        if (!root_seen) {
          if (local != "labels") fail(fmt::format("expected root element <labels>, got <{}>", name));
          root_seen = true;
        } else if (open.empty()) {
          fail(fmt::format("expected nothing after </labels>, got <{}>", name));
        } else if (local == "label") {
          const auto it = attrs.find("name");
          if (it == attrs.end()) fail_at(tag_line, "expected a name attribute in <label>");
          const auto [prev, inserted] = seen.emplace(it->second, tag_line);
          if (!inserted) {
            fail_at(tag_line, fmt::format("label {} listed twice (first at line {})", quote_token(it->second),
                                          prev->second));
          }
          labels.push_back({it->second, tag_line});
        } else {
          fail_at(tag_line, fmt::format("expected <label name=\"...\"> elements, got <{}>", name));
        }
        if (!self_closing) open.push_back(name);
      }
    }
    // End-of-file errors name the last line of the file (not the empty one after a final newline).
    const int64_t last_line = (!text_.empty() && text_.back() == '\n') ? line_ - 1 : line_;
    if (!root_seen) fail_at(std::max<int64_t>(last_line, 1), "expected root element <labels>, got the end of the file");
    if (!open.empty()) {
      fail_at(last_line, fmt::format("expected '</{}>' before the end of the file (truncated file?)", open.back()));
    }
    return labels;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }

  void advance_to(size_t p) {
    line_ += std::count(text_.begin() + static_cast<std::ptrdiff_t>(pos_),
                        text_.begin() + static_cast<std::ptrdiff_t>(std::min(p, text_.size())), '\n');
    pos_ = p;
  }

  [[noreturn]] void fail(std::string detail) const { throw ParseError(source_, line_, std::move(detail)); }
  [[noreturn]] void fail_at(int64_t line, std::string detail) const {
    throw ParseError(source_, line, std::move(detail));
  }

  void check_text(std::string_view t) {
    for (size_t k = 0; k < t.size(); ++k) {
      if (!is_xml_space(t[k])) {
        advance_to(pos_ + k);
        const size_t end = t.find_first_of("\r\n<", k);
        fail(fmt::format("expected only tags and spaces, got text {}", quote_token(t.substr(k, end - k))));
      }
    }
  }

  void skip_past(std::string_view terminator, std::string_view what) {
    const size_t end = text_.find(terminator, pos_);
    if (end == std::string_view::npos) fail(fmt::format("expected {} (truncated file?)", what));
    advance_to(end + terminator.size());
  }

  void skip_space() {
    size_t p = pos_;
    while (p < text_.size() && is_xml_space(text_[p])) ++p;
    advance_to(p);
  }

  void expect(char c) {
    if (at_end()) fail(fmt::format("expected '{}', got the end of the file (truncated file?)", c));
    if (text_[pos_] != c) fail(fmt::format("expected '{}', got '{}'", c, text_[pos_]));
    advance_to(pos_ + 1);
  }

  std::string_view read_name() {
    size_t p = pos_;
    while (p < text_.size() && !is_xml_space(text_[p]) && text_[p] != '>' && text_[p] != '/' &&
           text_[p] != '=' && text_[p] != '<' && text_[p] != '"' && text_[p] != '\'') {
      ++p;
    }
    const std::string_view name = text_.substr(pos_, p - pos_);
    advance_to(p);
    return name;
  }

  std::string read_quoted() {
    if (at_end() || (text_[pos_] != '"' && text_[pos_] != '\'')) {
      fail("expected a quoted attribute value");
    }
    const char quote = text_[pos_];
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("expected the closing quote of an attribute value (truncated file?)");
    const std::string_view raw = text_.substr(pos_ + 1, end - pos_ - 1);
    std::string value = decode_entities(raw);
    advance_to(end + 1);
    return value;
  }

  std::string decode_entities(std::string_view raw) const {
    std::string out;
    for (size_t k = 0; k < raw.size(); ++k) {
      if (raw[k] == '<') fail("expected '&lt;' instead of '<' inside an attribute value");
      if (raw[k] != '&') {
        out += raw[k];
        continue;
      }
      const size_t semi = raw.find(';', k);
      if (semi == std::string_view::npos) fail(fmt::format("expected ';' ending the entity in {}", quote_token(raw)));
      const std::string_view ent = raw.substr(k + 1, semi - k - 1);
      if (ent == "lt") {
        out += '<';
      } else if (ent == "gt") {
        out += '>';
      } else if (ent == "amp") {
        out += '&';
      } else if (ent == "quot") {
        out += '"';
      } else if (ent == "apos") {
        out += '\'';
      } else if (ent.starts_with("#")) {
        const bool hex = ent.size() > 1 && (ent[1] == 'x' || ent[1] == 'X');
        const std::string_view digits = ent.substr(hex ? 2 : 1);
        uint32_t cp = 0;
        bool ok = !digits.empty() && digits.size() <= 8;
        for (char c : digits) {
          uint32_t d;
          if (c >= '0' && c <= '9') {
            d = static_cast<uint32_t>(c - '0');
          } else if (hex && c >= 'a' && c <= 'f') {
            d = static_cast<uint32_t>(c - 'a' + 10);
          } else if (hex && c >= 'A' && c <= 'F') {
            d = static_cast<uint32_t>(c - 'A' + 10);
          } else {
            ok = false;
            break;
          }
          cp = cp * (hex ? 16 : 10) + d;
        }
        if (!ok || cp == 0 || cp > 0x10FFFF) fail(fmt::format("expected a character reference, got '&{};'", ent));
        append_utf8(out, cp);
      } else {
        fail(fmt::format("expected a known XML entity, got '&{};'", ent));
      }
      k = semi;
    }
    return out;
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
  int64_t line_ = 1;
};

}  // namespace

std::vector<XmlLabel> parse_mulan_labels(std::string_view text, const std::string& source) {
  return XmlScanner(text, source).run();
}

std::vector<XmlLabel> read_mulan_labels(const std::filesystem::path& path) {
  std::ifstream in = open_input_file(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error(fmt::format("{}: read error", path.string()));
  return parse_mulan_labels(text, path.string());
}

}  // namespace lobench::data
