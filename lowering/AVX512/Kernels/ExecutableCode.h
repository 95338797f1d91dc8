//===- ExecutableCode.h - Run kernel bytes in this process ----*- C++ -*-===//
//
// The compiler only writes kernel bytes into objects; the unit tests and
// `mlcc bench --peak` run some in this process. ExecutableBuffer copies
// code into fresh pages and flips them from read-write to read-execute
// (never both at once).
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_LOWERING_AVX512_KERNELS_EXECUTABLECODE_H
#define MLCC_LOWERING_AVX512_KERNELS_EXECUTABLECODE_H

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace mlcc::avx512 {

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

} // namespace mlcc::avx512

#endif // MLCC_LOWERING_AVX512_KERNELS_EXECUTABLECODE_H
