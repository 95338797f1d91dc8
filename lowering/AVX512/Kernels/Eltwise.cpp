//===- Eltwise.cpp - AVX-512 elementwise chain kernels --------------------===//
//
// The kernel is laid out as oneDNN's jit_uni_eltwise: fields of the args
// struct loaded by offset, named registers, a main loop over `unroll` zmm
// vectors, the leftover whole vectors straight-line, then one opmask tail.
// Every count is a constant of the code, so there is no tail test at run
// time and a kernel for n < 16 is a single masked vector. A run-time n
// counts its vectors down in r10 (the main loop, then one vector at a
// time) and masks the tail with the call's low bits (an empty mask does
// nothing).
//
// Register plan (all caller-saved under SysV, so nothing is saved):
//   rdi  args            rsi, rdx, rcx, r8  src[0..3]     r9  dst
//   r10  loop counter    eax  tail mask bits    r11  n % 16 (run-time n)
//   k1   tail mask       k2..k5  lane scratch masks
//   zmm  lane u holds its value and scratch at u * (1 + temps) onward;
//        the registers above the lanes hold the most used constants.
//
//===----------------------------------------------------------------------===//

#include "Eltwise.h"
#include "EltwiseInjector.h"
#include "JitGenerator.h"

#include "KernelABI.h"

#include <algorithm>
#include <cstddef>

namespace mlcc::avx512 {

//===----------------------------------------------------------------------===//
// Op names
//===----------------------------------------------------------------------===//

namespace {

struct KindName {
  EltwiseKind kind;
  const char *name;
};

// Graph dialect mnemonics, as the reference registry spells them.
constexpr KindName kKindNames[] = {
    {EltwiseKind::Relu, "relu"},
    {EltwiseKind::LeakyRelu, "leaky_relu"},
    {EltwiseKind::Clip, "clip"},
    {EltwiseKind::Neg, "neg"},
    {EltwiseKind::Abs, "abs"},
    {EltwiseKind::Sigmoid, "sigmoid"},
    {EltwiseKind::Tanh, "tanh"},
    {EltwiseKind::Exp, "exp"},
    {EltwiseKind::Erf, "erf"},
    {EltwiseKind::Gelu, "gelu"},
    {EltwiseKind::HardSwish, "hard_swish"},
    {EltwiseKind::Silu, "silu"},
    // Not a mnemonic: graph.gelu with approximate = "tanh", named as the
    // fused ops' activation attribute names it.
    {EltwiseKind::GeluTanh, "gelu_tanh"},
    {EltwiseKind::Elu, "elu"},
    {EltwiseKind::Selu, "selu"},
    {EltwiseKind::Celu, "celu"},
    {EltwiseKind::HardSigmoid, "hard_sigmoid"},
    {EltwiseKind::Softplus, "softplus"},
    {EltwiseKind::Softsign, "softsign"},
    {EltwiseKind::Log, "log"},
    {EltwiseKind::Sqrt, "sqrt"},
    {EltwiseKind::Reciprocal, "reciprocal"},
    {EltwiseKind::Pow, "pow"},
    {EltwiseKind::Add, "add"},
    {EltwiseKind::Sub, "sub"},
    {EltwiseKind::Mul, "mul"},
    {EltwiseKind::Div, "div"},
    {EltwiseKind::Max, "max"},
    {EltwiseKind::Min, "min"},
    {EltwiseKind::Select, "where"},
};

bool isKnownKind(EltwiseKind kind) {
  return static_cast<unsigned>(kind) <=
         static_cast<unsigned>(EltwiseKind::Select);
}

} // namespace

const char *eltwiseKindName(EltwiseKind kind) {
  for (const KindName &k : kKindNames)
    if (k.kind == kind)
      return k.name;
  return "<unknown>";
}

bool isEltwisePowExponent(float exponent) {
  for (float e : {-2.0f, -1.0f, -0.5f, 0.5f, 2.0f, 3.0f})
    if (exponent == e)
      return true;
  return false;
}

bool isBinary(EltwiseKind kind) {
  return static_cast<unsigned>(kind) >= static_cast<unsigned>(EltwiseKind::Add);
}

Status eltwiseKindFromName(const std::string &name, EltwiseKind &kind) {
  for (const KindName &k : kKindNames) {
    if (name == k.name) {
      kind = k.kind;
      return Status::success();
    }
  }
  return Status::error("eltwise: op '", name,
                       "' has no AVX-512 elementwise kernel");
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

namespace {

constexpr int kMaxUnroll = 4;
constexpr int kNumZmm = 32;

Status validate(const EltwiseSpec &spec) {
  const std::string &name = spec.name;
  MLCC_CHECK(spec.dtype == DType::F32, name,
             ": eltwise kernels take f32 only, not ",
             ref::dtypeName(spec.dtype));
  MLCC_CHECK(spec.n >= 0, name, ": element count ", spec.n, " is negative");
  MLCC_CHECK(spec.unroll >= 0 && spec.unroll <= kMaxUnroll, name, ": unroll ",
             spec.unroll, " is not in [0, ", kMaxUnroll, "]");
  // A source is either walked as an array or read once as a scalar: its
  // pointer register advances in the first case only.
  enum Use { Unused, AsArray, AsScalar };
  Use uses[MLCC_ELTWISE_MAX_SRC] = {AsArray};
  for (size_t i = 0; i < spec.ops.size(); ++i) {
    const EltwiseOp &op = spec.ops[i];
    MLCC_CHECK(isKnownKind(op.kind), name, ": op ", i, " has unsupported kind ",
               static_cast<unsigned>(op.kind));
    MLCC_CHECK(op.kind != EltwiseKind::Pow || isEltwisePowExponent(op.alpha),
               name, ": op ", i, " (pow) has exponent ", op.alpha,
               ", not one of -2, -1, -0.5, 0.5, 2, 3");
    const char *opName = eltwiseKindName(op.kind);
    MLCC_CHECK(op.kind != EltwiseKind::Select ||
                   op.rhs.kind == EltwiseOperand::Kind::Array,
               name, ": op ", i, " (", opName,
               ") takes its condition as an array");
    if (!isBinary(op.kind) || op.rhs.kind == EltwiseOperand::Kind::Constant)
      continue;
    MLCC_CHECK(op.rhs.kind == EltwiseOperand::Kind::Array ||
                   op.rhs.kind == EltwiseOperand::Kind::Broadcast,
               name, ": op ", i, " (", opName, ") has an unknown operand kind");
    MLCC_CHECK(op.rhs.src >= 0 && op.rhs.src < MLCC_ELTWISE_MAX_SRC, name,
               ": op ", i, " (", opName, ") reads src[", op.rhs.src,
               "], outside [0, ", MLCC_ELTWISE_MAX_SRC, ")");
    Use want = op.rhs.kind == EltwiseOperand::Kind::Array ? AsArray : AsScalar;
    Use &have = uses[op.rhs.src];
    MLCC_CHECK(have == Unused || have == want, name, ": op ", i, " (", opName,
               ") reads src[", op.rhs.src, "] as ",
               want == AsArray ? "an array" : "a broadcast scalar",
               " but it is used as ",
               have == AsArray ? "an array" : "a broadcast scalar");
    have = want;
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

class EltwiseKernel : public JitGenerator {
public:
  EltwiseKernel(std::vector<uint8_t> &buffer, const EltwiseSpec &spec,
                int unroll, int temps, const std::vector<uint32_t> &preload)
      : JitGenerator(buffer), spec_(spec), unroll_(unroll), temps_(temps),
        preload_(preload), injector_(*this) {
    for (const EltwiseOp &op : spec.ops)
      if (isBinary(op.kind) && op.rhs.kind == EltwiseOperand::Kind::Array) {
        isArray_[op.rhs.src] = true;
        if (op.kind == EltwiseKind::Select)
          elementBytes_[op.rhs.src] = 1;
      }
  }

  void generate();

  /// Registers not taken by `unroll` lanes: the room for constants.
  static int freeRegisters(int unroll, int temps) {
    return kNumZmm - unroll * (1 + temps);
  }

private:
  const EltwiseSpec &spec_;
  const int unroll_;
  const int temps_;
  const std::vector<uint32_t> preload_;
  EltwiseInjector injector_;
  bool isArray_[MLCC_ELTWISE_MAX_SRC] = {true};
  // Bytes of an array's elements: f32, or a select's bool bytes.
  int elementBytes_[MLCC_ELTWISE_MAX_SRC] = {4, 4, 4, 4};

  const Xbyak::Reg64 regArgs_ = rdi;
  const Xbyak::Reg64 regSrc_[MLCC_ELTWISE_MAX_SRC] = {rsi, rdx, rcx, r8};
  const Xbyak::Reg64 regDst_ = r9;
  const Xbyak::Reg64 regIter_ = r10;
  const Xbyak::Opmask kTail_ = k1;

  EltwiseLane lane(int u) const;
  void loadArgs();
  /// One pass of the chain over `lanes` consecutive vectors at the current
  /// pointers; `tail` masks everything with kTail_ (then lanes == 1).
  void block(int lanes, bool tail);
  void applyBinary(const EltwiseOp &op, const EltwiseLane &l, int u, bool tail);
  void advance(int lanes);
  /// The vectors of args->n, in place of the constant counts.
  void runTimeCount();
};

EltwiseLane EltwiseKernel::lane(int u) const {
  int base = u * (1 + temps_);
  EltwiseLane l;
  l.x = Xbyak::Zmm(base);
  for (int j = 0; j < kEltwiseMaxTemps; ++j)
    // Past temps_ nothing is used; alias the value so a stray use shows in
    // the results rather than clobbering another lane.
    l.t[j] = Xbyak::Zmm(j < temps_ ? base + 1 + j : base);
  l.k = Xbyak::Opmask(2 + u);
  return l;
}

void EltwiseKernel::loadArgs() {
  for (int i = 0; i < MLCC_ELTWISE_MAX_SRC; ++i) {
    bool used = i == 0;
    for (const EltwiseOp &op : spec_.ops)
      used |= isBinary(op.kind) &&
              op.rhs.kind != EltwiseOperand::Kind::Constant && op.rhs.src == i;
    if (used)
      mov(regSrc_[i],
          ptr[regArgs_ + static_cast<int>(offsetof(mlcc_eltwise_args, src) +
                                          i * sizeof(void *))]);
  }
  mov(regDst_,
      ptr[regArgs_ + static_cast<int>(offsetof(mlcc_eltwise_args, dst))]);
}

void EltwiseKernel::applyBinary(const EltwiseOp &op, const EltwiseLane &l,
                                int u, bool tail) {
  const Xbyak::Zmm &t = l.t[0];
  bool inReg = EltwiseInjector::rhsInRegister(op);
  const Xbyak::Reg64 &src = regSrc_[op.rhs.src];
  switch (op.rhs.kind) {
  case EltwiseOperand::Kind::Constant:
    if (inReg) {
      loadCst(t, op.rhs.value);
      injector_.binary(op, l, t);
    } else {
      injector_.binary(op, l, cst(op.rhs.value));
    }
    return;
  case EltwiseOperand::Kind::Broadcast:
    if (inReg) {
      vbroadcastss(t, dword[src]);
      injector_.binary(op, l, t);
    } else {
      injector_.binary(op, l, ptr_b[src]);
    }
    return;
  case EltwiseOperand::Kind::Array: {
    if (op.kind == EltwiseKind::Select) {
      // The 16 condition bytes; lanes that take alpha: true ones (false
      // ones when swapped).
      const Xbyak::Xmm bytes(t.getIdx());
      Xbyak::Address a = ptr[src + u * kF32Lanes];
      if (tail)
        vmovdqu8(bytes | kTail_ | T_z, a);
      else
        vmovdqu8(bytes, a);
      if (op.swapped)
        vptestnmb(l.k, bytes, bytes);
      else
        vptestmb(l.k, bytes, bytes);
      vmovaps(l.x | l.k, cstReg(op.alpha, t));
      return;
    }
    Xbyak::Address a = ptr[src + u * kZmmBytes];
    if (tail) {
      // Masked lanes are not read, so the tail never touches memory past n.
      vmovups(t | kTail_ | T_z, a);
      injector_.binary(op, l, t);
    } else if (inReg) {
      vmovups(t, a);
      injector_.binary(op, l, t);
    } else {
      injector_.binary(op, l, a);
    }
    return;
  }
  }
}

void EltwiseKernel::block(int lanes, bool tail) {
  for (int u = 0; u < lanes; ++u) {
    Xbyak::Address a = ptr[regSrc_[0] + u * kZmmBytes];
    if (tail)
      vmovups(lane(u).x | kTail_ | T_z, a);
    else
      vmovups(lane(u).x, a);
  }
  // Op-major order: the lanes' independent chains interleave, which hides
  // the latency of each op's dependent steps.
  for (const EltwiseOp &op : spec_.ops)
    for (int u = 0; u < lanes; ++u) {
      if (isBinary(op.kind))
        applyBinary(op, lane(u), u, tail);
      else
        injector_.unary(op, lane(u));
    }
  for (int u = 0; u < lanes; ++u) {
    Xbyak::Address a = ptr[regDst_ + u * kZmmBytes];
    if (tail)
      vmovups(a | kTail_, lane(u).x);
    else
      vmovups(a, lane(u).x);
  }
}

void EltwiseKernel::advance(int lanes) {
  for (int i = 0; i < MLCC_ELTWISE_MAX_SRC; ++i)
    if (isArray_[i])
      add(regSrc_[i], lanes * kF32Lanes * elementBytes_[i]);
  add(regDst_, lanes * kZmmBytes);
}

void EltwiseKernel::runTimeCount() {
  Xbyak::Label loop, singles, single, tail, done;
  loadAtMost(regIter_,
             ptr[regArgs_ + static_cast<int>(offsetof(mlcc_eltwise_args, n))],
             spec_.n, rax);
  test(regIter_, regIter_);
  jle(done, T_NEAR);
  mov(r11d, Xbyak::Reg32(regIter_.getIdx()));
  and_(r11d, kF32Lanes - 1);
  mov(eax, 0xffff);
  bzhi(eax, eax, r11d); // (1 << n % 16) - 1; BMI2 comes with AVX-512
  kmovw(kTail_, eax);
  shr(regIter_, 4); // whole vectors
  L(loop);
  cmp(regIter_, unroll_);
  jb(singles, T_NEAR);
  block(unroll_, false);
  advance(unroll_);
  sub(regIter_, unroll_);
  jmp(loop, T_NEAR);
  L(singles);
  test(regIter_, regIter_);
  jz(tail, T_NEAR);
  L(single);
  block(1, false);
  advance(1);
  dec(regIter_);
  jnz(single, T_NEAR);
  L(tail);
  block(1, true);
  L(done);
}

void EltwiseKernel::generate() {
  preamble();
  if (spec_.n == 0) {
    postamble();
    return;
  }
  loadArgs();
  int firstFree = unroll_ * (1 + temps_);
  std::vector<Xbyak::Zmm> constRegs;
  for (int r = kNumZmm - 1; r >= firstFree; --r)
    constRegs.push_back(Xbyak::Zmm(r));
  preloadConstants(preload_, constRegs);
  if (spec_.runTimeN) {
    runTimeCount();
    postamble();
    return;
  }

  const int64_t vectors = spec_.n / kF32Lanes;
  const int rem = static_cast<int>(spec_.n % kF32Lanes);
  const int64_t iters = vectors / unroll_;
  const int rest = static_cast<int>(vectors % unroll_);
  if (rem) {
    mov(eax, (1u << rem) - 1);
    kmovw(kTail_, eax);
  }

  if (iters == 1) {
    block(unroll_, false);
    if (rest || rem)
      advance(unroll_);
  } else if (iters > 1) {
    Xbyak::Label loop;
    mov(regIter_, iters);
    alignCode(32, /*withNops=*/true);
    L(loop);
    block(unroll_, false);
    advance(unroll_);
    dec(regIter_);
    jnz(loop, T_NEAR);
  }
  if (rest) {
    block(rest, false);
    if (rem)
      advance(rest);
  }
  if (rem)
    block(1, true);
  postamble();
}

/// Generates into a scratch buffer, growing it until the code fits. Returns
/// the constants by use when `usage` is set.
Status emit(const EltwiseSpec &spec, int unroll, int temps,
            const std::vector<uint32_t> &preload, std::vector<uint8_t> &code,
            std::vector<uint32_t> *usage) {
  return generateInGrowingBuffer(
      [&](std::vector<uint8_t> &buffer) {
        EltwiseKernel kernel(buffer, spec, unroll, temps, preload);
        kernel.generate();
        MLCC_RETURN_IF_ERROR(kernel.finish(spec.name, code));
        if (usage)
          *usage = kernel.constantsByUse();
        return Status::success();
      });
}

} // namespace

Status generateEltwise(const EltwiseSpec &spec, std::vector<uint8_t> &code) {
  code.clear();
  MLCC_RETURN_IF_ERROR(validate(spec));
  int temps = 0;
  for (const EltwiseOp &op : spec.ops)
    temps = std::max(temps, EltwiseInjector::tempsNeeded(op));
  int unroll = spec.unroll ? spec.unroll : kMaxUnroll;
  int spare = EltwiseKernel::freeRegisters(unroll, temps);

  std::vector<uint32_t> preload;
  if (spec.constantsInRegisters && spare > 0) {
    // First pass: which constants the body asks for, and how often.
    std::vector<uint8_t> scratch;
    MLCC_RETURN_IF_ERROR(emit(spec, unroll, temps, {}, scratch, &preload));
    if (preload.size() > static_cast<size_t>(spare))
      preload.resize(spare);
  }
  return emit(spec, unroll, temps, preload, code, nullptr);
}

} // namespace mlcc::avx512
