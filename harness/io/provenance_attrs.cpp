#include "harness/io/provenance_attrs.hpp"

#include "harness/io/h5_io.hpp"

namespace lobench {

void write_provenance(hid_t obj, const Provenance& p) {
  h5::write_attr(obj, "lobench_version", lobench_version());
  h5::write_attr(obj, "git_commit", p.git_commit);
  h5::write_attr(obj, "git_dirty", int64_t(p.git_dirty));
  h5::write_attr(obj, "build_commit", p.build_commit);
  h5::write_attr(obj, "build_dirty", int64_t(p.build_dirty));
  h5::write_attr(obj, "host", p.host);
  h5::write_attr(obj, "cpu_model", p.cpu_model);
  h5::write_attr(obj, "cpu_id", p.cpu_id);
  h5::write_attr(obj, "cpu_simd", p.cpu_simd);
  h5::write_attr(obj, "fp16_epilogue", p.fp16_epilogue);
  if (!p.gpu_model.empty()) h5::write_attr(obj, "gpu_model", p.gpu_model);
  h5::write_attr(obj, "compiler", p.compiler);
  h5::write_attr(obj, "libraries", p.libraries);
  h5::write_attr(obj, "sgemm_library", p.sgemm_library);
  if (!p.plugins.empty()) h5::write_attr(obj, "plugins", p.plugins);
  h5::write_attr(obj, "argv", p.argv);
  h5::write_attr(obj, "start_utc", p.start_utc);
  h5::write_attr(obj, "hardware_threads", int64_t(p.hardware_threads));
}

}  // namespace lobench
