//===- ExecutableBuffer.h - Run generated code in tests ---------*- C++ -*-===//
//
// The compiler only writes kernel bytes; the tests have to map them to run
// them. ExecutableBuffer copies code into fresh pages and flips them from
// read-write to read-execute (never both at once). GuardedArray places data
// so that its last element ends right at an inaccessible page: a kernel
// that reads or writes one element too many faults instead of passing.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_TEST_UNIT_LOWERING_EXECUTABLEBUFFER_H
#define MLCC_TEST_UNIT_LOWERING_EXECUTABLEBUFFER_H

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace mlcc::test {

inline size_t pageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

inline size_t roundUpToPage(size_t bytes) {
  size_t page = pageSize();
  return (bytes + page - 1) / page * page;
}

/// Code copied to `offset` bytes into its own mapping, executable while the
/// object lives. Different offsets put the same bytes at different
/// addresses, which is how the tests check position independence.
class ExecutableBuffer {
public:
  explicit ExecutableBuffer(const std::vector<uint8_t> &code,
                            size_t offset = 0) {
    size_ = roundUpToPage(offset + code.size() + 1);
    void *p = mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return;
    base_ = static_cast<uint8_t *>(p);
    if (!code.empty())
      std::memcpy(base_ + offset, code.data(), code.size());
    if (mprotect(base_, size_, PROT_READ | PROT_EXEC) != 0)
      return;
    entry_ = base_ + offset;
  }
  ~ExecutableBuffer() {
    if (base_)
      munmap(base_, size_);
  }
  ExecutableBuffer(const ExecutableBuffer &) = delete;
  ExecutableBuffer &operator=(const ExecutableBuffer &) = delete;

  /// False when mapping or protecting failed.
  bool ok() const { return entry_ != nullptr; }
  const void *address() const { return entry_; }
  template <typename Fn> Fn function() const {
    return reinterpret_cast<Fn>(const_cast<uint8_t *>(entry_));
  }

private:
  uint8_t *base_ = nullptr;
  const uint8_t *entry_ = nullptr;
  size_t size_ = 0;
};

/// `n` elements of T whose end touches a PROT_NONE page.
template <typename T> class GuardedArray {
public:
  explicit GuardedArray(size_t n) : n_(n) {
    size_t bytes = roundUpToPage(n * sizeof(T));
    size_ = bytes + pageSize();
    void *p = mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return;
    base_ = static_cast<uint8_t *>(p);
    if (mprotect(base_ + bytes, pageSize(), PROT_NONE) != 0)
      return;
    data_ = reinterpret_cast<T *>(base_ + bytes) - n;
  }
  GuardedArray(const std::vector<T> &values) : GuardedArray(values.size()) {
    if (data_ && !values.empty())
      std::memcpy(data_, values.data(), values.size() * sizeof(T));
  }
  ~GuardedArray() {
    if (base_)
      munmap(base_, size_);
  }
  GuardedArray(const GuardedArray &) = delete;
  GuardedArray &operator=(const GuardedArray &) = delete;

  bool ok() const { return data_ != nullptr; }
  T *data() { return data_; }
  std::vector<T> values() const { return std::vector<T>(data_, data_ + n_); }

private:
  uint8_t *base_ = nullptr;
  T *data_ = nullptr;
  size_t n_ = 0;
  size_t size_ = 0;
};

} // namespace mlcc::test

#endif // MLCC_TEST_UNIT_LOWERING_EXECUTABLEBUFFER_H
