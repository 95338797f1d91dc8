//===- Misc.cpp - Portable lowering of the Misc family ---------===//

#include "PortableLowering.h"

namespace mlcc::portable {

void registerPortableMisc(PortableRegistry &registry) { (void)registry; }

} // namespace mlcc::portable
