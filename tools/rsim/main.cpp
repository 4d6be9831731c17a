// SPDX-License-Identifier: MIT
#include "cli.hpp"

#include <iostream>
#include <malloc.h>

int main(int argc, char** argv) {
  // A search builds and drops thousands of op graphs of a few MB: glibc would hand each freed
  // block back to the kernel (munmap, heap trim) and fault it in again for the next, a third of
  // a GPT-3 training search's time. Keep freed memory for reuse instead (virtual size only; the
  // resident set stays what the live graphs need). Under a sanitizer's allocator this is a no-op.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
  return rsim::run_cli(argc, argv, std::cout, std::cerr);
}
