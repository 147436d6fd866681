#include "datasets/mulan_xml.hpp"

#include <gtest/gtest.h>

#include "datasets/tests/test_support.hpp"

namespace lobench::data {
namespace {

using testing::expect_parse_error;

void expect_error(const std::string& text, int64_t line, const std::string& fragment) {
  expect_parse_error([&] { parse_mulan_labels(text, "l.xml"); }, "l.xml", line, fragment);
}

TEST(DatasetsMulanXml, ReadsNamesLinesAndEntities) {
  const auto labels = parse_mulan_labels(
      "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
      "<!-- a comment <label name=\"ignored\"/> -->\n"
      "<labels xmlns=\"http://mulan.sourceforge.net/labels\">\n"
      "<label name=\"TAG_2005\"></label>\n"
      "<label name=\"TAG_m\\'usica\"/>\n"
      "  <label\n name='a &amp; b &lt;&#65;&#x42;&quot;' />\n"
      "<label name=\"parent\"><label name=\"child\"></label></label>\n"
      "</labels>\n",
      "l.xml");
  ASSERT_EQ(labels.size(), 5u);
  EXPECT_EQ(labels[0].name, "TAG_2005");
  EXPECT_EQ(labels[0].line, 4);
  EXPECT_EQ(labels[1].name, "TAG_m\\'usica");  // escapes are the ARFF's business, kept as written
  EXPECT_EQ(labels[1].line, 5);
  EXPECT_EQ(labels[2].name, "a & b <AB\"");
  EXPECT_EQ(labels[2].line, 6);
  EXPECT_EQ(labels[3].name, "parent");
  EXPECT_EQ(labels[4].name, "child");
  EXPECT_EQ(labels[4].line, 8);  // the label on lines 6-7 spans two lines
}

TEST(DatasetsMulanXml, Errors) {
  expect_error("", 1, "expected root element <labels>, got the end of the file");
  expect_error("<?xml version=\"1.0\"?>\n<lables>\n</lables>\n", 2, "expected root element <labels>, got <lables>");
  expect_error("<labels>\n<label nome=\"x\"/>\n</labels>\n", 2, "expected a name attribute in <label>");
  expect_error("<labels>\n<label name=\"x\"/>\n<label name=\"x\"/>\n</labels>\n", 3,
               "label 'x' listed twice (first at line 2)");
  expect_error("<labels>\n<label name=\"x\"/>\n", 2, "expected '</labels>' before the end of the file");
  expect_error("<labels>\n<label name=\"x\"", 2, "expected '>' closing <label>");
  expect_error("<labels>\n<label name=\"x/>\n</labels>\n", 2, "closing quote");
  expect_error("<labels>\n<tag name=\"x\"/>\n</labels>\n", 2, "expected <label name=\"...\"> elements, got <tag>");
  expect_error("<labels>\n<label name=\"a &nbsp; b\"/>\n</labels>\n", 2, "expected a known XML entity, got '&nbsp;'");
  expect_error("<labels>\nstray text\n</labels>\n", 2, "expected only tags and spaces, got text 'stray text'");
  expect_error("<labels>\n</label>\n", 2, "expected '</labels>', got '</label>'");
  expect_error("<labels>\n<!-- open comment\n", 2, "'-->'");
  expect_error("<labels/>\n<label name=\"x\"/>\n", 2, "expected nothing after </labels>");
}

}  // namespace
}  // namespace lobench::data
