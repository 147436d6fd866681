#include "harness/io/result_row.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <sys/wait.h>

namespace lobench {
namespace {

// results/SCHEMA.md is generated from the column lists: regenerate it with
// `build/lobench schema --out results/SCHEMA.md --overwrite` when this fails. Compared with what the executable prints,
// not with io::schema_markdown() in this binary: the training jobs' sections come from the jobs the
// executable registers (sweep/training_job.hpp), which this test binary does not link.
#ifdef LOBENCH_EXE
TEST(ResultSchema, TheCommittedSchemaDocumentIsCurrent) {
  std::ifstream f(std::string(LOBENCH_SOURCE_DIR) + "/results/SCHEMA.md");
  ASSERT_TRUE(f) << "results/SCHEMA.md missing";
  std::stringstream committed;
  committed << f.rdbuf();
  FILE* p = popen((std::string("'") + LOBENCH_EXE + "' schema").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string printed;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) printed.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << "`lobench schema` failed";
  EXPECT_EQ(committed.str(), printed)
      << "results/SCHEMA.md is stale: run `build/lobench schema --out results/SCHEMA.md --overwrite`";
}

// `schema --out` writes as every command does (io/output_path.hpp): an existing file (a run file, say)
// is refused and kept byte for byte unless --overwrite, and a FIFO is refused, not opened (which blocks).
TEST(ResultSchema, SchemaOutRefusesAnExistingFileAndAFifo) {
  const std::string dir = testing::TempDir(), out = dir + "/schema_out_test.md", fifo = dir + "/schema_out_fifo";
  std::remove(out.c_str());
  std::remove(fifo.c_str());
  { std::ofstream(out) << "hours of results"; }
  const std::string cli = std::string("'") + LOBENCH_EXE + "' schema --out ";
  EXPECT_EQ(WEXITSTATUS(std::system((cli + out + " 2>/dev/null").c_str())), 2);
  std::stringstream kept;
  kept << std::ifstream(out).rdbuf();
  EXPECT_EQ(kept.str(), "hours of results");
  EXPECT_EQ(std::system((cli + out + " --overwrite").c_str()), 0);
  std::stringstream written;
  written << std::ifstream(out).rdbuf();
  EXPECT_EQ(written.str().rfind("# Run files (HDF5)", 0), 0u) << written.str().substr(0, 80);
  ASSERT_EQ(std::system(("mkfifo '" + fifo + "'").c_str()), 0);
  EXPECT_EQ(WEXITSTATUS(std::system(("timeout 20 " + cli + fifo + " 2>/dev/null").c_str())), 2);  // (124: it blocked)
  std::remove(out.c_str());
  std::remove(fifo.c_str());
}
#endif

TEST(ResultSchema, ColumnsAreDistinctAndTileTheRowInOrder) {
  std::set<std::string> names;
  size_t end = 0;
  for (const io::Column& c : io::result_columns()) {
    EXPECT_TRUE(names.insert(c.name).second) << "column twice: " << c.name;
    EXPECT_GE(c.offset, end) << c.name << " overlaps the column before it";
    EXPECT_LT(c.offset - end, 8u) << "a gap of more than alignment padding before " << c.name;
    end = c.offset + c.size;
    EXPECT_NE(std::string(c.meaning), "") << c.name << " has no meaning";
  }
  EXPECT_LE(end, sizeof(io::ResultRow));
  EXPECT_GT(end + 8, sizeof(io::ResultRow));
}

TEST(ResultSchema, MeasurementsDefaultToNaNAndTheKeyIgnoresThem) {
  io::ResultRow r;
  EXPECT_TRUE(std::isnan(r.time_median_s));
  EXPECT_TRUE(std::isnan(r.peak_bytes));
  EXPECT_TRUE(std::isnan(r.counts_mismatch));
  EXPECT_EQ(r.ranks, 1);
  const std::string k = r.key();
  r.time_median_s = 1.0;
  r.loss = 2.0;
  EXPECT_EQ(r.key(), k);
  r.seed = 7;
  EXPECT_NE(r.key(), k);
}

// The identity columns (the key) are those before `status` but the completion order and what is derived
// or measured; a file written before `operand` or `e_format` existed matches fp32.
TEST(ResultSchema, TheKeyIsTheIdentityColumnsBeforeStatus) {
  std::string names;
  for (const io::Column* c : io::identity_columns()) names += std::string(names.empty() ? "" : " ") + c->name;
  EXPECT_EQ(names, "variant backend B N V D L reduction weighted block_v block_p threads seed e_format e_rounding "
                   "operand epilogue ranks shard");
  io::ResultRow r;
  const std::string empty = r.key();
  r.operand.set("fp32");
  r.e_format.set("fp32");
  r.epilogue.set("fp32");
  EXPECT_EQ(r.key(), empty);
  r.epilogue.set("bf16");
  EXPECT_NE(r.key(), empty);
  r.epilogue.set("");
  r.e_stored_bytes = 100;  // measured
  r.P = 12;                // B·N
  EXPECT_EQ(r.key(), empty);
  r.shard.set("vocab");
  EXPECT_NE(r.key(), empty);
}

TEST(ResultSchema, ColumnsReadAndSetAsText) {
  io::ResultRow r;
  io::set_column_text(r, io::result_column("B"), "12345678901");
  io::set_column_text(r, io::result_column("threads"), "7");
  io::set_column_text(r, io::result_column("e_format"), "bfloat16");
  EXPECT_EQ(r.B, 12345678901);
  EXPECT_EQ(r.threads, 7);
  EXPECT_EQ(r.e_format.str(), "bfloat16");
  EXPECT_EQ(io::column_text(r, io::result_column("B")), "12345678901");
  EXPECT_EQ(io::column_text(r, io::result_column("e_format")), "bfloat16");
  EXPECT_THROW(io::set_column_text(r, io::result_column("threads"), "3000000000"), std::invalid_argument);
  EXPECT_THROW(io::set_column_text(r, io::result_column("B"), "1e3"), std::invalid_argument);
  EXPECT_THROW(io::set_column_text(r, io::result_column("operand"), "a name longer than eight"), std::invalid_argument);
  EXPECT_THROW(io::result_column("no_such_column"), std::logic_error);
}

}  // namespace
}  // namespace lobench
