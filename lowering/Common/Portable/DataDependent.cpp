//===- DataDependent.cpp - nonzero, compress, unique, non_max_suppression -===//

#include "PortableLowering.h"

namespace mlcc::portable {

void registerPortableDataDependent(PortableRegistry &registry) {
  (void)registry;
}

} // namespace mlcc::portable
