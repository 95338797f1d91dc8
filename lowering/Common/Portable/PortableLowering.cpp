//===- PortableLowering.cpp - Registry and buffer types -------------------===//

#include "PortableLowering.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace mlcc::portable {

const PortableRegistry &portableRegistry() {
  static const PortableRegistry registry = [] {
    PortableRegistry r;
    registerPortableElementwise(r);
    registerPortableDataMovement(r);
    registerPortableReductions(r);
    registerPortableNN(r);
    registerPortableFused(r);
    registerPortableFc(r);
    registerPortableStencil(r);
    registerPortableResize(r);
    registerPortableRecurrent(r);
    registerPortableSampling(r);
    registerPortableSignal(r);
    registerPortableDataDependent(r);
    return r;
  }();
  return registry;
}

Type storageType(Type tensorElementType) {
  if (auto it = dyn_cast<IntegerType>(tensorElementType))
    if (!it.isSignless())
      return IntegerType::get(it.getContext(), it.getWidth());
  return tensorElementType;
}

MemRefType bufferType(Type tensorType) {
  auto t = cast<ShapedType>(tensorType);
  // MLIR passes a memref with a 0 dim after the first as a descriptor, not
  // a bare pointer: every empty tensor gets the one empty shape.
  if (t.getNumElements() == 0)
    return MemRefType::get({0}, storageType(t.getElementType()));
  return MemRefType::get(t.getShape(), storageType(t.getElementType()));
}

} // namespace mlcc::portable
