#include "harness/io/output_path.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <fmt/format.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace lobench::io {
namespace fs = std::filesystem;

namespace {

// What is at a path, symlinks followed: "a directory", "a FIFO", ...; empty for a regular file.
std::string not_regular(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISFIFO(st.st_mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

std::string not_regular_file(const std::string& path) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) return "";
  return not_regular(st);
}

namespace {

[[noreturn]] void refuse(const std::string& option, const std::string& path, const std::string& why) {
  throw PathError(fmt::format("{} '{}': {}", option, path, why));
}

// Refuses `out` when something other than a regular file is there, or when it is one of `inputs`.
void check_output(const std::string& out, const std::string& shown, const std::vector<std::string>& inputs,
                  const std::string& option) {
  struct stat st{};
  if (lstat(out.c_str(), &st) == 0 && S_ISLNK(st.st_mode) && stat(out.c_str(), &st) != 0)
    refuse(option, shown, "is a symlink to nothing; refusing to replace it");
  if (stat(out.c_str(), &st) != 0) {
    if (errno == ENOENT) return;  // nothing there yet
    refuse(option, shown, fmt::format("cannot be examined: {}", std::strerror(errno)));
  }
  if (const std::string what = not_regular(st); !what.empty())
    refuse(option, shown, fmt::format("is {}; refusing to replace it (give the path of a file)", what));
  for (const std::string& in : inputs) {
    struct stat si{};
    if (stat(in.c_str(), &si) == 0 && si.st_dev == st.st_dev && si.st_ino == st.st_ino)
      refuse(option, shown, fmt::format("is the input '{}'; refusing to overwrite an input", in));
  }
}

}  // namespace

void check_output_place(const std::string& out, const std::vector<std::string>& inputs, const std::string& option) {
  if (out.empty()) refuse(option, out, "is empty; give the path of a file");
  std::error_code ec;
  // A symlink to a regular file is written through: its target is replaced, the link kept.
  const fs::path resolved = fs::is_symlink(out, ec) ? fs::weakly_canonical(out, ec) : fs::path(out);
  const std::string path = ec ? out : resolved.string();
  check_output(path, out, inputs, option);
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    refuse(option, out, fmt::format("its folder '{}' does not exist", parent.string()));
}

void require_input_file(const std::string& path, const std::string& option) {
  if (path.empty()) refuse(option, path, "is empty; give the path of a file");
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) refuse(option, path, fmt::format("cannot be read: {}", std::strerror(errno)));
  if (const std::string what = not_regular(st); !what.empty())
    refuse(option, path, fmt::format("is {}, not a regular file", what));
  if (access(path.c_str(), R_OK) != 0) refuse(option, path, fmt::format("cannot be read: {}", std::strerror(errno)));
}

void check_append_target(const std::string& path, bool resume, const std::string& option) {
  check_output(path, path, {}, option);
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  if (!resume) refuse(option, path, "exists; give --resume to append to it, or another path");
  // One this user may not read is said to be so: HDF5 would call it "not an HDF5 file".
  if (access(path.c_str(), R_OK | W_OK) != 0)
    refuse(option, path, fmt::format("cannot be read and written to resume it: {}", std::strerror(errno)));
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (H5Fis_hdf5(path.c_str()) <= 0)
    refuse(option, path, "is not an HDF5 file, so not a run file to resume; refusing to replace it");
}

namespace {

// OUT with symlinks resolved as far as they go (the lock of a file is the same under any of its names).
std::string resolved_output(const std::string& out) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(out, ec);
  return ec ? out : p.string();
}

}  // namespace

OutputLock::OutputLock(const std::string& out, const std::string& option) {
  if (out.empty()) refuse(option, out, "is empty; give the path of a file");
  lock_path_ = resolved_output(out) + ".lock";
  // Locking, then checking that the lock file is still the one at lock_path_: a releasing writer
  // unlinks it, and a lock taken on an unlinked file would let a third writer in beside us.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) refuse(option, out, fmt::format("cannot create its lock file '{}': {}", lock_path_, std::strerror(errno)));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      close(fd);
      if (err == EWOULDBLOCK)
        refuse(option, out, fmt::format("another lobench is writing it (lock '{}' held); wait for it or write another "
                                        "path",
                                        lock_path_));
      refuse(option, out, fmt::format("cannot lock '{}': {}", lock_path_, std::strerror(err)));
    }
    struct stat held{}, there{};
    if (fstat(fd, &held) == 0 && stat(lock_path_.c_str(), &there) == 0 && held.st_dev == there.st_dev &&
        held.st_ino == there.st_ino) {
      fd_ = fd;
      return;
    }
    close(fd);  // it was unlinked by the writer that just released it: take the new one
  }
  refuse(option, out, fmt::format("cannot take the lock '{}' (it keeps being replaced)", lock_path_));
}

OutputLock& OutputLock::operator=(OutputLock&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = o.fd_;
    lock_path_ = std::move(o.lock_path_);
    o.fd_ = -1;
  }
  return *this;
}

void OutputLock::release() {
  if (fd_ < 0) return;
  unlink(lock_path_.c_str());  // while still held: nobody else can be holding this file
  close(fd_);
  fd_ = -1;
}

OutputLock::~OutputLock() { release(); }

OutputFile::OutputFile(const std::string& out, const std::vector<std::string>& inputs, const std::string& option,
                       bool take_lock)
    : option_(option), inputs_(inputs) {
  check_output_place(out, inputs, option);
  std::error_code ec;
  const fs::path resolved = fs::is_symlink(out, ec) ? fs::weakly_canonical(out, ec) : fs::path(out);
  path_ = ec ? out : resolved.string();
  if (take_lock) lock_ = OutputLock(path_, option);
  std::string pattern = path_ + ".partial-XXXXXX";
  const int fd = mkstemp(pattern.data());
  if (fd < 0) refuse(option, out, fmt::format("cannot create a file beside it: {}", std::strerror(errno)));
  // mkstemp creates 0600; an output is an ordinary file, readable as the umask allows.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  close(fd);
  temp_ = pattern;
}

void OutputFile::refuse_existing_unless(bool overwrite) const {
  std::error_code ec;
  if (!overwrite && fs::exists(fs::symlink_status(path_, ec)))
    refuse(option_, path_, "exists; give --overwrite to replace it, or another path");
}

OutputFile::~OutputFile() {
  if (!committed_ && !temp_.empty()) unlink(temp_.c_str());
}

void OutputFile::commit() {
  check_output(path_, path_, inputs_, option_);
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    refuse(option_, path_, fmt::format("cannot be written (rename from '{}' failed: {})", temp_, std::strerror(errno)));
  committed_ = true;
}

}  // namespace lobench::io
