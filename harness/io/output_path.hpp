// The one way a command writes a file it was told to write, and the one check of a file it was told to
// read. Outputs are written to a temporary file beside OUT and renamed onto OUT only when complete, so
// a failure (an exception, a refused input) leaves OUT as it was, and nothing new behind. OUT is refused
// when it is one of the inputs (same path or same inode: a hard link, a symlink) or when something that
// is not a regular file is there (a directory, a device node such as /dev/null, a FIFO, a socket, or a
// symlink to one of those): the rename would replace it. Inputs are refused unless they are regular
// files, so a FIFO given as --in is a message, not a read that blocks forever.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace lobench::io {

// A path a command cannot use, with a message that names the option, the path and why.
struct PathError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What is at `path` when it is not a regular file (symlinks followed): "a directory", "a FIFO (named
// pipe)", "a character device", ...; empty for a regular file or nothing at all.
std::string not_regular_file(const std::string& path);

// Throws PathError("OPTION 'PATH': ...") unless `path` names a readable regular file (symlinks
// followed). `option` is how the user gave it, e.g. "--in".
void require_input_file(const std::string& path, const std::string& option);

// The checks an OutputFile for `out` makes (below), without writing or locking anything: for a path a
// run writes only later (a checkpoint after its first epoch), refused at start rather than then. Throws
// PathError naming `option`: something not a regular file there, a symlink to nothing, one of `inputs`,
// or a folder that does not exist.
void check_output_place(const std::string& out, const std::vector<std::string>& inputs, const std::string& option);

// For a file that grows in place (the run file of `lobench run`, appended row by row so that a killed
// sweep keeps its rows): refuses `path` when something that is not a regular file is there; without
// `resume`, when a file is there at all (it holds hours of results: `--resume` appends to it); with
// `resume`, when the file there is not an HDF5 file (it would be replaced). Nothing there is fine.
// Throws PathError naming `option`.
void check_append_target(const std::string& path, bool resume, const std::string& option = "--out");

// One writer per output: an exclusive lock (flock) on the file "OUT.lock" beside OUT (OUT with symlinks
// resolved, so two names of one file share it), held for the lifetime of this object, i.e. for the whole
// run. A second lobench writing the same OUT is refused at once with PathError naming `option`, OUT and
// "another lobench is writing it", never blocks and never truncates the first one's file. The lock file
// is removed when released; one left by a killed process holds no lock (the kernel drops it with the
// process), so it never blocks a later run.
class OutputLock {
 public:
  OutputLock() = default;
  OutputLock(const std::string& out, const std::string& option = "--out");
  ~OutputLock();
  OutputLock(OutputLock&& o) noexcept : fd_(o.fd_), lock_path_(std::move(o.lock_path_)) { o.fd_ = -1; }
  OutputLock& operator=(OutputLock&& o) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  const std::string& lock_path() const { return lock_path_; }

 private:
  void release();
  int fd_ = -1;
  std::string lock_path_;
};

// An output being written: temp_path() is where to write, commit() renames it onto path(). Destroyed
// without commit(), it removes the temporary file (and only that). Holds the OutputLock of OUT from
// construction to destruction.
class OutputFile {
 public:
  // Resolves `out` (a symlink to a regular file: its target), checks it as described above against
  // `inputs`, and creates an empty temporary file beside it (OUT.partial-XXXXXX, mode 0644 less umask).
  // Throws PathError naming `option` and the path.
  // `take_lock` false: the caller holds OUT's OutputLock already (a second lock on it would be refused).
  OutputFile(const std::string& out, const std::vector<std::string>& inputs, const std::string& option = "--out",
             bool take_lock = true);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }
  // A file already at OUT is replaced only when the user asked for it (--overwrite): otherwise throws
  // PathError "OPTION 'OUT' exists; give --overwrite to replace it, or another path", OUT untouched.
  // Called after construction, so that an OUT that is an input or a special file is named as such.
  void refuse_existing_unless(bool overwrite) const;
  // Checks OUT again (something may have appeared there meanwhile) and renames the temporary file onto
  // it. Throws PathError, leaving OUT untouched, if it cannot.
  void commit();

 private:
  std::string path_, temp_, option_;
  std::vector<std::string> inputs_;
  OutputLock lock_;
  bool committed_ = false;
};

}  // namespace lobench::io
