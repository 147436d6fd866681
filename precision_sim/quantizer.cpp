#include "precision_sim/quantizer.hpp"

#include <omp.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "precision_sim/detail/kernels.hpp"
#include "precision_sim/detail/plan_build.hpp"
#include "precision_sim/pack.hpp"

namespace lobench::precision {

namespace detail {

// Decode by table lookup (2^bits floats), built on first use: 1 KiB for 8-bit formats, 256 KiB for
// 16-bit ones, so a Quantizer that never decodes never pays for it.
struct DecodeTable {
  std::once_flag once;
  std::vector<float> values;
};

const KernelTable& kernels_for(Isa isa);

}  // namespace detail

namespace {

// Work is split into chunks of this many elements (a multiple of 64, so chunk boundaries fall on
// whole Philox groups; correctness does not depend on it).
constexpr size_t kChunk = size_t{1} << 16;

int resolve_threads(int threads) { return threads <= 0 ? omp_get_max_threads() : threads; }

// When input + output reach this size the output will not stay in cache anyway (the machines here
// have 32 MiB of L3), so it is written with non-temporal stores: reading its lines first would be
// wasted bandwidth. Results are identical either way.
constexpr size_t kStreamingBytes = size_t{24} << 20;

bool streaming(Rounding mode, size_t n, size_t out_bytes) {
  return !is_stochastic(mode) && n * (sizeof(float) + out_bytes) >= kStreamingBytes;
}

template <typename Fn>
void parallel_chunks(size_t n, int threads, Fn&& fn) {
  threads = resolve_threads(threads);
  const size_t chunks = (n + kChunk - 1) / kChunk;
  if (threads <= 1 || chunks <= 1) {
    if (n) fn(size_t{0}, n);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (size_t c = 0; c < chunks; ++c) {
    const size_t begin = c * kChunk;
    fn(begin, std::min(kChunk, n - begin));
  }
}

void check_sizes(size_t in, size_t out, const char* what) {
  if (in != out)
    throw std::invalid_argument(std::string(what) + ": input has " + std::to_string(in) + " elements, output " +
                                std::to_string(out));
}

// Runs one of the array kernels (round, encode8, encode16) over the chunks of `in`; each chunk's
// random words start at its global index, so the split never changes the result.
template <typename Out>
void run_kernel(void (*kernel)(const float*, Out*, size_t, const detail::KernelArgs&), const detail::Plan* plan,
                int sr_bits, const RoundingOptions& opt, std::span<const float> in, std::span<Out> out, int threads) {
  const detail::KernelArgs args{plan, opt.mode, sr_bits, opt.seed, opt.stream, opt.index_offset,
                                streaming(opt.mode, in.size(), sizeof(Out))};
  parallel_chunks(in.size(), threads, [&](size_t begin, size_t len) {
    detail::KernelArgs a = args;
    a.first_index += begin;
    kernel(in.data() + begin, out.data() + begin, len, a);
  });
}

}  // namespace

Quantizer::Quantizer(Format format, Isa isa)
    : format_(std::move(format)),
      isa_(isa),
      plan_(std::make_shared<detail::Plan>(detail::make_plan(format_))),
      kernels_(&detail::kernels_for(isa)),
      decode_table_(std::make_shared<detail::DecodeTable>()) {
  if (!isa_available(isa)) throw std::invalid_argument("ISA " + std::string(isa_name(isa)) + " is not available here");
}

int Quantizer::resolved_sr_bits(int sr_bits) const {
  if (sr_bits == 0) return plan_->default_sr_bits;
  if (sr_bits < 1 || sr_bits > 31)
    throw std::invalid_argument("stochastic rounding bits must be 1..31 (or 0 for the default " +
                                std::to_string(plan_->default_sr_bits) + "), got " + std::to_string(sr_bits));
  return sr_bits;
}

float Quantizer::round(float x, Rounding mode, uint32_t word, int sr_bits) const {
  return round_hd(x, *plan_, mode, word, resolved_sr_bits(sr_bits));
}

uint32_t Quantizer::encode(float x, Rounding mode, uint32_t word, int sr_bits) const {
  return encode_hd(x, *plan_, mode, word, resolved_sr_bits(sr_bits));
}

float Quantizer::decode(uint32_t code) const { return detail::u2f(detail::decode_bits(format_, code)); }

bool Quantizer::is_nan_code(uint32_t code) const {
  const uint32_t b = detail::decode_bits(format_, code) & 0x7FFFFFFFu;
  return b > 0x7F800000u;
}

void Quantizer::round(std::span<const float> in, std::span<float> out, const RoundingOptions& opt, int threads) const {
  check_sizes(in.size(), out.size(), "round");
  run_kernel(kernels_->round, plan_.get(), resolved_sr_bits(opt.sr_bits), opt, in, out, threads);
}

void Quantizer::encode(std::span<const float> in, std::span<uint8_t> out, const RoundingOptions& opt,
                       int threads) const {
  check_sizes(in.size(), out.size(), "encode");
  if (format_.bits() > 8)
    throw std::invalid_argument("format " + format_.name + " has " + std::to_string(format_.bits()) +
                                " bits: its codes do not fit uint8");
  run_kernel(kernels_->encode8, plan_.get(), resolved_sr_bits(opt.sr_bits), opt, in, out, threads);
}

void Quantizer::encode(std::span<const float> in, std::span<uint16_t> out, const RoundingOptions& opt,
                       int threads) const {
  check_sizes(in.size(), out.size(), "encode");
  if (format_.bits() > 16)
    throw std::invalid_argument("format " + format_.name + " has " + std::to_string(format_.bits()) +
                                " bits: its codes do not fit uint16 (keep it in float32)");
  run_kernel(kernels_->encode16, plan_.get(), resolved_sr_bits(opt.sr_bits), opt, in, out, threads);
}

namespace {

template <typename Code>
void decode_impl(const Format& f, detail::DecodeTable& table, std::span<const Code> in, std::span<float> out,
                 int threads) {
  check_sizes(in.size(), out.size(), "decode");
  if (f.bits() > static_cast<int>(8 * sizeof(Code)))
    throw std::invalid_argument("format " + f.name + " has " + std::to_string(f.bits()) + " bits: codes of " +
                                std::to_string(8 * sizeof(Code)) + " bits cannot hold it");
  std::call_once(table.once, [&] {
    const uint32_t count = uint32_t{1} << f.bits();
    table.values.resize(count);
    for (uint32_t c = 0; c < count; ++c) table.values[c] = detail::u2f(detail::decode_bits(f, c));
  });
  const float* lut = table.values.data();
  const uint32_t mask = static_cast<uint32_t>(table.values.size() - 1);  // bits above the format are ignored
  parallel_chunks(in.size(), threads, [&](size_t begin, size_t len) {
    const Code* src = in.data() + begin;
    float* dst = out.data() + begin;
    for (size_t i = 0; i < len; ++i) dst[i] = lut[src[i] & mask];
  });
}

}  // namespace

void Quantizer::decode(std::span<const uint8_t> in, std::span<float> out, int threads) const {
  decode_impl(format_, *decode_table_, in, out, threads);
}

void Quantizer::decode(std::span<const uint16_t> in, std::span<float> out, int threads) const {
  decode_impl(format_, *decode_table_, in, out, threads);
}

// --- free-function conveniences (pack.hpp, rounding.hpp)

void encode(std::span<const float> in, std::span<uint8_t> out, const Format& f, const RoundingOptions& opt,
            int threads) {
  Quantizer(f).encode(in, out, opt, threads);
}
void encode(std::span<const float> in, std::span<uint16_t> out, const Format& f, const RoundingOptions& opt,
            int threads) {
  Quantizer(f).encode(in, out, opt, threads);
}
void decode(std::span<const uint8_t> in, std::span<float> out, const Format& f, int threads) {
  Quantizer(f).decode(in, out, threads);
}
void decode(std::span<const uint16_t> in, std::span<float> out, const Format& f, int threads) {
  Quantizer(f).decode(in, out, threads);
}
void round_to_format(std::span<const float> in, std::span<float> out, const Format& f, const RoundingOptions& opt,
                     int threads) {
  Quantizer(f).round(in, out, opt, threads);
}
float round_to_format(float x, const Format& f, Rounding mode, uint32_t word, int sr_bits) {
  return Quantizer(f, Isa::scalar).round(x, mode, word, sr_bits);
}

}  // namespace lobench::precision
