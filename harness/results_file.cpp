#include "results_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace lobench {
namespace {

template <size_t N>
void copy_str(char (&dst)[N], const std::string& s) {
  std::memset(dst, 0, N);
  std::memcpy(dst, s.data(), std::min(s.size(), N - 1));
}

// The compound type of ResultRow, field by field (names are the schema; see results/SCHEMA.md).
h5::Handle row_type() {
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(ResultRow));
  auto str = [&](const char* name, size_t off, size_t n) {
    h5::Handle s(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(s, n);
    H5Tset_strpad(s, H5T_STR_NULLTERM);
    H5Tinsert(t, name, off, s);
  };
#define F(name, type) H5Tinsert(t, #name, offsetof(ResultRow, name), type)
#define S(name) str(#name, offsetof(ResultRow, name), sizeof(ResultRow::name))
  F(row_id, H5T_NATIVE_INT64);
  S(variant);
  S(backend);
  F(B, H5T_NATIVE_INT64);
  F(N, H5T_NATIVE_INT64);
  F(P, H5T_NATIVE_INT64);
  F(V, H5T_NATIVE_INT64);
  F(D, H5T_NATIVE_INT64);
  F(L, H5T_NATIVE_INT64);
  S(reduction);
  F(weighted, H5T_NATIVE_INT32);
  F(block_v, H5T_NATIVE_INT64);
  F(block_p, H5T_NATIVE_INT64);
  F(threads, H5T_NATIVE_INT32);
  F(seed, H5T_NATIVE_INT64);
  S(e_format);
  S(e_rounding);
  F(e_stored_bytes, H5T_NATIVE_INT64);
  S(operand);
  S(status);
  S(reason);
  F(warmup, H5T_NATIVE_INT32);
  F(reps, H5T_NATIVE_INT32);
  {
    const hsize_t n = kMaxSamples;
    h5::Handle arr(H5Tarray_create2(H5T_NATIVE_DOUBLE, 1, &n), H5Tclose);
    H5Tinsert(t, "time_samples_s", offsetof(ResultRow, time_samples_s), arr);
  }
  F(time_median_s, H5T_NATIVE_DOUBLE);
  F(time_min_s, H5T_NATIVE_DOUBLE);
  F(time_max_s, H5T_NATIVE_DOUBLE);
  F(flops, H5T_NATIVE_DOUBLE);
  F(effective_gflops, H5T_NATIVE_DOUBLE);
  F(gemm_gflops, H5T_NATIVE_DOUBLE);
  F(gemm_fraction, H5T_NATIVE_DOUBLE);
  F(peak_bytes, H5T_NATIVE_INT64);
  F(predicted_bytes, H5T_NATIVE_INT64);
  F(peak_device_bytes, H5T_NATIVE_INT64);
  F(input_bytes, H5T_NATIVE_INT64);
  F(output_bytes, H5T_NATIVE_INT64);
  F(loss, H5T_NATIVE_DOUBLE);
  F(ref_loss, H5T_NATIVE_DOUBLE);
  F(rel_loss_err, H5T_NATIVE_DOUBLE);
  F(rel_dA_err, H5T_NATIVE_DOUBLE);
  F(rel_dE_err, H5T_NATIVE_DOUBLE);
  F(rel_loss_err_kernel, H5T_NATIVE_DOUBLE);
  F(rel_dA_err_kernel, H5T_NATIVE_DOUBLE);
  F(rel_dE_err_kernel, H5T_NATIVE_DOUBLE);
  F(counts_mismatch, H5T_NATIVE_INT64);
  S(utc);
#undef F
#undef S
  return h5::Handle(t, H5Tclose);
}

}  // namespace

void ResultRow::set_variant(const std::string& s) { copy_str(variant, s); }
void ResultRow::set_backend(const std::string& s) { copy_str(backend, s); }
void ResultRow::set_reduction(const std::string& s) { copy_str(reduction, s); }
void ResultRow::set_status(const std::string& s) { copy_str(status, s); }
void ResultRow::set_e_format(const std::string& s) { copy_str(e_format, s); }
void ResultRow::set_e_rounding(const std::string& s) { copy_str(e_rounding, s); }
void ResultRow::set_operand(const std::string& s) { copy_str(operand, s); }
void ResultRow::set_reason(const std::string& s) { copy_str(reason, s); }

std::string ResultRow::key() const {
  return fmt::format("{}/{} B={} N={} V={} D={} L={} {} w={} bv={} bp={} t={} seed={} E={}/{} op={}", backend, variant,
                     B, N, V, D, L, reduction, weighted, block_v, block_p, threads, seed,
                     e_format[0] ? e_format : "fp32", e_rounding,  // files older than the column: fp32
                     operand[0] ? operand : "fp32");
}

ResultsFile::ResultsFile(const std::string& path, const Provenance& prov, bool resume) : path_(path) {
  h5::silence_errors();
  const h5::Handle type = row_type();
  const bool reopen = resume && H5Fis_hdf5(path.c_str()) > 0;
  if (reopen) {
    file_ = h5::open_file_rw(path);
    if (!h5::exists(file_, "results"))
      throw h5::Error(fmt::format("'{}' has no /results table to resume", path));
    table_ = h5::Table::open(file_, "results", type, path);
    for (const ResultRow& r : h5::read_table<ResultRow>(file_, "results", type, path)) keys_.insert(r.key());
    const double resumes = h5::read_attr_double(file_, "resume_count").value_or(0.0);
    h5::write_attr(file_, "resume_count", resumes + 1);
    h5::write_attr(file_, "last_resume_utc", prov.start_utc);
    h5::write_attr(file_, "last_resume_argv", prov.argv);
    return;
  }
  file_ = h5::create_file(path);
  write_provenance(file_, prov);
  h5::write_attr(file_, "schema_version", int64_t(1));
  table_ = h5::Table::create(file_, "results", type, /*chunk_rows=*/64, path);
  H5Fflush(file_, H5F_SCOPE_GLOBAL);
}

ResultsFile::~ResultsFile() {
  if (file_.valid()) H5Fflush(file_, H5F_SCOPE_GLOBAL);
}

void ResultsFile::append(ResultRow row) {
  if (table_.missing_columns().count("operand") && row.operand[0] && std::string(row.operand) != "fp32")
    throw h5::Error(fmt::format("'{}' was written before the operand column existed: a row with operand {} cannot be "
                                "recorded in it (write a new run file)",
                                path_, row.operand));
  row.row_id = table_.rows();
  table_.append(row);  // flushed: a killed sweep keeps every finished row
  keys_.insert(row.key());
}

void ResultsFile::set_attr(const std::string& name, double v) { h5::write_attr(file_, name, v); }
void ResultsFile::set_attr(const std::string& name, const std::string& v) { h5::write_attr(file_, name, v); }

void ResultsFile::close(const std::string& end_utc) {
  h5::write_attr(file_, "end_utc", end_utc);
  H5Fflush(file_, H5F_SCOPE_GLOBAL);
}

std::vector<ResultRow> ResultsFile::read_all(const std::string& path) {
  auto f = h5::open_file_read(path);
  return h5::read_table<ResultRow>(f, "results", row_type(), path);
}

}  // namespace lobench
