#include "variants/cpu/onednn.hpp"

#include <fmt/format.h>

#include <omp.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#ifdef LOBENCH_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_debug.h>
#endif

namespace lobench::cpu {

OmpMaxThreads::OmpMaxThreads(int threads) : saved_(omp_get_max_threads()) { omp_set_num_threads(threads); }
OmpMaxThreads::~OmpMaxThreads() { omp_set_num_threads(saved_); }

#ifdef LOBENCH_HAVE_ONEDNN

std::optional<std::string> onednn_unavailable() { return std::nullopt; }

std::string onednn_name() {
  const dnnl_version_t* v = dnnl_version();
  std::string isa = dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa());  // "cpu_isa_avx512_core_amx"
  if (isa.rfind("cpu_isa_", 0) == 0) isa = isa.substr(8);
  return fmt::format("oneDNN {}.{}.{} ({})", v->major, v->minor, v->patch, isa);
}

void onednn_sgemm(bool transpose_a, bool transpose_b, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda,
                  const float* B, int64_t ldb, float* C, int64_t ldc, bool accumulate) {
  const dnnl_status_t status = dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', M, N, K, 1.0f, A, lda, B, ldb,
                                          accumulate ? 1.0f : 0.0f, C, ldc);
  if (status != dnnl_success)
    throw std::runtime_error(fmt::format("oneDNN's sgemm refused M = {}, N = {}, K = {} (status {})", M, N, K, int(status)));
}

struct OnednnBf16SquareProduct::State {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul matmul;
  dnnl::memory a, b, c;
};

OnednnBf16SquareProduct::OnednnBf16SquareProduct(int64_t n, const uint16_t* a, const uint16_t* b) {
  using dnnl::memory;
  try {
    state_ = std::make_unique<State>();
    const memory::desc a_desc({n, n}, memory::data_type::bf16, memory::format_tag::ab);
    const memory::desc b_desc({n, n}, memory::data_type::bf16, memory::format_tag::ab);
    const memory::desc c_desc({n, n}, memory::data_type::f32, memory::format_tag::ab);
    state_->pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_desc, b_desc, c_desc), state_->engine);
    state_->matmul = dnnl::matmul(state_->pd);
    // (oneDNN reads the caller's buffers in place; it never writes a or b)
    state_->a = memory(a_desc, state_->engine, const_cast<uint16_t*>(a));
    state_->b = memory(b_desc, state_->engine, const_cast<uint16_t*>(b));
    state_->c = memory(c_desc, state_->engine);
  } catch (const dnnl::error& e) {
    throw std::runtime_error(fmt::format("oneDNN refused the bf16 matmul of {}³: {}", n, e.what()));
  }
}

void OnednnBf16SquareProduct::operator()() {
  try {
    state_->matmul.execute(state_->stream, {{DNNL_ARG_SRC, state_->a}, {DNNL_ARG_WEIGHTS, state_->b}, {DNNL_ARG_DST, state_->c}});
    state_->stream.wait();
  } catch (const dnnl::error& e) {  // (a std::exception, not a runtime_error: said as the callers expect)
    throw std::runtime_error(std::string("oneDNN's bf16 matmul failed: ") + e.what());
  }
}

std::string OnednnBf16SquareProduct::implementation() const { return state_->pd.impl_info_str(); }

struct OnednnBf16TileLogits::State {
  int64_t D = 0;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::mutex mutex;  // (guards the primitives)
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::pair<dnnl::matmul::primitive_desc, dnnl::matmul>> made;
  std::string implementation;
};

OnednnBf16TileLogits::OnednnBf16TileLogits(int64_t D) : state_(std::make_unique<State>()) { state_->D = D; }

namespace {

using TilePrimitive = std::pair<dnnl::matmul::primitive_desc, dnnl::matmul>;

// The primitive of a tile shape, made on first use (the caller holds the mutex; map nodes stay put).
const TilePrimitive& tile_primitive(OnednnBf16TileLogits::State& s, int64_t rows, int64_t n, int64_t ldc) {
  auto it = s.made.find({rows, n, ldc});
  if (it == s.made.end()) {
    using dnnl::memory;
    const memory::desc a({rows, s.D}, memory::data_type::bf16, memory::format_tag::ab);
    const memory::desc b({s.D, n}, memory::data_type::bf16, memory::format_tag::ba);  // E_rows [n, D] is Bᵀ
    const memory::desc c({rows, n}, memory::data_type::f32, memory::dims{ldc, 1});
    // (a scratchpad of the caller's: with the library's, which Debian's build shares between primitives,
    // a primitive runs only on the thread that made it, and two threads' tiles came out wrong)
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, s.engine);
    s.implementation = pd.impl_info_str();
    it = s.made.emplace(std::tuple(rows, n, ldc), TilePrimitive(pd, dnnl::matmul(pd))).first;
  }
  return it->second;
}

std::runtime_error refused(int64_t rows, int64_t n, int64_t D, const dnnl::error& e) {
  return std::runtime_error(fmt::format("oneDNN refused the bf16 tile {} x {} x {}: {}", rows, n, D, e.what()));
}

}  // namespace

void OnednnBf16TileLogits::prepare(int64_t rows, int64_t n, int64_t ldc) {
  try {
    std::lock_guard<std::mutex> lock(state_->mutex);
    tile_primitive(*state_, rows, n, ldc);
  } catch (const dnnl::error& e) {
    throw refused(rows, n, state_->D, e);
  }
}

void OnednnBf16TileLogits::operator()(const uint16_t* A_rows, int64_t rows, const uint16_t* E_rows, int64_t n, float* C,
                                      int64_t ldc) {
  using dnnl::memory;
  try {
    const TilePrimitive* made = nullptr;
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      made = &tile_primitive(*state_, rows, n, ldc);
    }
    const dnnl::matmul::primitive_desc& pd = made->first;
    thread_local std::vector<uint8_t> scratch;  // this thread's scratchpad, grown as needed
    if (scratch.size() < pd.scratchpad_desc().get_size()) scratch.resize(pd.scratchpad_desc().get_size());
    dnnl::stream stream(state_->engine);
    // (oneDNN reads the caller's buffers in place; it never writes a or b)
    made->second.execute(stream, {{DNNL_ARG_SRC, memory(pd.src_desc(), state_->engine, const_cast<uint16_t*>(A_rows))},
                                  {DNNL_ARG_WEIGHTS, memory(pd.weights_desc(), state_->engine, const_cast<uint16_t*>(E_rows))},
                                  {DNNL_ARG_DST, memory(pd.dst_desc(), state_->engine, C)},
                                  {DNNL_ARG_SCRATCHPAD, memory(pd.scratchpad_desc(), state_->engine, scratch.data())}});
    stream.wait();
  } catch (const dnnl::error& e) {
    throw refused(rows, n, state_->D, e);
  }
}

std::string OnednnBf16TileLogits::implementation() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->implementation;
}

#else

std::optional<std::string> onednn_unavailable() {
  return "lobench was built without oneDNN (install Debian's libdnnl-dev, or scripts/install_deps.sh, and rebuild)";
}

std::string onednn_name() { return "oneDNN (not built in)"; }

void onednn_sgemm(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t, bool) {
  throw std::runtime_error(*onednn_unavailable());
}

struct OnednnBf16SquareProduct::State {};

OnednnBf16SquareProduct::OnednnBf16SquareProduct(int64_t, const uint16_t*, const uint16_t*) {
  throw std::runtime_error(*onednn_unavailable());
}

void OnednnBf16SquareProduct::operator()() {}

std::string OnednnBf16SquareProduct::implementation() const { return ""; }

struct OnednnBf16TileLogits::State {};

OnednnBf16TileLogits::OnednnBf16TileLogits(int64_t) { throw std::runtime_error(*onednn_unavailable()); }

void OnednnBf16TileLogits::operator()(const uint16_t*, int64_t, const uint16_t*, int64_t, float*, int64_t) {}

void OnednnBf16TileLogits::prepare(int64_t, int64_t, int64_t) {}

std::string OnednnBf16TileLogits::implementation() const { return ""; }

#endif

OnednnBf16SquareProduct::~OnednnBf16SquareProduct() = default;
OnednnBf16TileLogits::~OnednnBf16TileLogits() = default;

}  // namespace lobench::cpu
