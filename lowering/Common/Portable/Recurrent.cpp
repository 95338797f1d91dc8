//===- Recurrent.cpp - graph.lstm, graph.gru and graph.rnn ----------------===//
//
// One-layer recurrent cells, computed as the reference kernel does
// (compiler/Reference/Kernels/Recurrent.cpp): in double whatever the tensor
// dtype, the running state kept in double, each result rounded once. The
// loops are those of oneDNN's RNN primitive:
//
//   xw[d, t, n, :] = X[t, n] W[d]^T + Wb[d]   all steps and directions at once
//   for step in [0, seq):                     the recurrence, scf.for
//     hr[d, n, :] = H[d, n] R[d]^T + Rb[d]     per direction and batch row
//     gates, state update, Y[t]               per (direction, row, unit)
//
// Both directions run in the same time loop, the direction being the outer
// parallel dim of every nest; the reverse one walks t = len - 1 - step. A
// batch row whose sequence_lens entry is done keeps its state and leaves its
// rows of Y zero. Every product is a dot product over contiguous memory (W
// and R rows, H rows and those of an f64 copy of X), reassociable so that
// LLVM vectorises it. The activations are in RecurrentActivations.cpp.
//
//===----------------------------------------------------------------------===//

#include "NNUtils.h"
#include "ParallelLoops.h"
#include "RecurrentActivations.h"

#include "GraphDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <optional>
#include <string>
#include <type_traits>

using namespace mlir;

namespace mlcc::portable {
namespace {

using namespace red;
using namespace rnn;

// Operand positions shared by the three ops.
enum { kX = 0, kW, kR, kB, kSeqLens, kInitH, kInitC, kP };

//===----------------------------------------------------------------------===//
// The op's attributes and shapes
//===----------------------------------------------------------------------===//

struct CellSpec {
  Cell kind;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;
  bool batchFirst = false, reverseOnly = false;
  bool linearBeforeReset = false, inputForget = false;
  std::optional<double> clip;
  std::vector<Activation> acts; // activationCount(kind) per direction
};

/// Checks an optional operand's static shape against `want`.
LogicalResult checkShape(Operation *op, unsigned i, const char *what,
                         ArrayRef<int64_t> want) {
  if (!hasOperand(op, i) || shapeOf(op->getOperand(i)) == want)
    return success();
  return op->emitError(what) << " has shape [" << shapeOf(op->getOperand(i))
                             << "], expected [" << want << "]";
}

template <typename OpT> FailureOr<CellSpec> readSpec(OpT op) {
  CellSpec c;
  c.kind = std::is_same_v<OpT, graph::LSTMOp>  ? Cell::Lstm
           : std::is_same_v<OpT, graph::GRUOp> ? Cell::Gru
                                               : Cell::Rnn;
  c.gates = c.kind == Cell::Lstm ? 4 : c.kind == Cell::Gru ? 3 : 1;
  StringRef dir = op.getDirection().value_or("forward");
  if (dir == "bidirectional")
    c.dirs = 2;
  else if (dir == "reverse")
    c.reverseOnly = true;
  else if (dir != "forward")
    return op.emitError("unknown direction '") << dir << "'";
  uint64_t layout = op.getLayout().value_or(0);
  if (layout > 1)
    return op.emitError("layout must be 0 or 1, got ") << layout;
  c.batchFirst = layout == 1;
  if (FloatAttr clip = op.getClipAttr()) {
    c.clip = clip.getValueAsDouble();
    if (!(*c.clip > 0))
      return op.emitError("clip must be positive, got ") << *c.clip;
  }
  if constexpr (std::is_same_v<OpT, graph::LSTMOp>)
    c.inputForget = op.getInputForget().value_or(0) != 0;
  if constexpr (std::is_same_v<OpT, graph::GRUOp>)
    c.linearBeforeReset = op.getLinearBeforeReset().value_or(0) != 0;

  Operation *o = op.getOperation();
  for (unsigned i = 0; i < o->getNumOperands(); ++i) {
    if (!hasOperand(o, i))
      continue;
    Elem e = elemOf(o->getOperand(i));
    bool ok = i == kSeqLens ? !e.isFloat && !e.isUnsigned : e.isFloat;
    if (!ok)
      return op.emitError("operand ")
             << i << " has element type " << o->getOperand(i).getType()
             << (i == kSeqLens ? ", expected signed integers"
                               : ", expected floats");
  }
  for (unsigned i : {kX, kW, kR})
    if (!hasOperand(o, i) || shapeOf(o->getOperand(i)).size() != 3)
      return op.emitError("X, W and R must be present and of rank 3");
  Type xt = cast<ShapedType>(op.getX().getType()).getElementType();
  for (Value v : {op.getW(), op.getR()})
    if (cast<ShapedType>(v.getType()).getElementType() != xt)
      return op.emitError("W and R must have the dtype of X");
  ArrayRef<int64_t> xs = shapeOf(op.getX());
  c.seq = c.batchFirst ? xs[1] : xs[0];
  c.batch = c.batchFirst ? xs[0] : xs[1];
  c.input = xs[2];
  c.hidden = shapeOf(op.getR())[2];
  if (std::optional<uint64_t> hs = op.getHiddenSize();
      hs && static_cast<int64_t>(*hs) != c.hidden)
    return op.emitError("hidden_size ")
           << *hs << " does not match R's last dim " << c.hidden;
  int64_t gh = c.gates * c.hidden;
  SmallVector<int64_t> state =
      c.batchFirst ? SmallVector<int64_t>{c.batch, c.dirs, c.hidden}
                   : SmallVector<int64_t>{c.dirs, c.batch, c.hidden};
  if (failed(checkShape(o, kW, "W", {c.dirs, gh, c.input})) ||
      failed(checkShape(o, kR, "R", {c.dirs, gh, c.hidden})) ||
      failed(checkShape(o, kB, "B", {c.dirs, 2 * gh})) ||
      failed(checkShape(o, kSeqLens, "sequence_lens", {c.batch})) ||
      failed(checkShape(o, kInitH, "initial_h", state)) ||
      failed(checkShape(o, kInitC, "initial_c", state)) ||
      failed(checkShape(o, kP, "P", {c.dirs, 3 * c.hidden})))
    return failure();
  SmallVector<int64_t> y =
      c.batchFirst ? SmallVector<int64_t>{c.batch, c.seq, c.dirs, c.hidden}
                   : SmallVector<int64_t>{c.seq, c.dirs, c.batch, c.hidden};
  for (auto [i, r] : llvm::enumerate(o->getResults())) {
    auto t = dyn_cast<ShapedType>(r.getType());
    if (t && (t.getElementType() != xt ||
              t.getShape() != ArrayRef<int64_t>(i == 0 ? y : state)))
      return op.emitError("result ") << i << " has type " << t;
  }
  if (failed(parseActivations(o, c.kind, c.dirs, op.getActivationsAttr(),
                              op.getActivationAlphaAttr(),
                              op.getActivationBetaAttr(), c.acts)))
    return failure();
  return c;
}

//===----------------------------------------------------------------------===//
// The recurrence
//===----------------------------------------------------------------------===//

/// sum over k in [0, n) of a(k) * w(k), in f64 as the reference's
/// matmulTransB; reassociable and contractable so that LLVM vectorises the
/// loop into FMAs.
Value dot(Builder &b, int64_t n, function_ref<Value(Builder &, Value)> a,
          function_ref<Value(Builder &, Value)> w) {
  auto fm = arith::FastMathFlags::reassoc | arith::FastMathFlags::contract;
  return loop(
      b, cIndex(b, 0), cIndex(b, n), {cF64(b, 0.0)},
      [&](Builder &b, ValueRange k, ValueRange acc) {
        Value prod = b.create<arith::MulFOp>(a(b, k[0]), w(b, k[0]), fm);
        return SmallVector<Value>{b.create<arith::AddFOp>(acc[0], prod, fm)};
      })[0];
}

/// The code of one op: the buffers, the spec and the index maps.
struct CellLowering {
  PortableOp &p;
  const CellSpec &c;
  int64_t gh;
  nn::Scratch &scratch;
  // Scratch, f64: the input projection [dirs, seq, batch, gates * hidden],
  // the state h and c [dirs, batch, hidden], the recurrent product of a
  // step [dirs, batch, rows]; GRU without linear_before_reset also needs
  // r . H and its product with Rh [dirs, batch, hidden]. lens: the
  // sequence lengths clamped into [0, seq] (i64), when given.
  Value xw, h, cState, hr, rh, rhr, lens;

  bool has(unsigned i) const { return i < p.operands.size() && p.operands[i]; }
  bool hasResult(unsigned i) const {
    return i < p.results.size() && p.results[i] &&
           !isa<NoneType>(p.op->getResult(i).getType());
  }
  /// Operand `i` at `idx`, as f64.
  Value in(Builder &b, unsigned i, ValueRange idx) const {
    return toF64(b, load(b, p.operands[i], idx), elemOf(p.op->getOperand(i)));
  }
  void out(Builder &b, unsigned i, Value v, ValueRange idx) const {
    store(b, fromF64(b, v, elemOf(p.op->getResult(i))), p.results[i], idx);
  }
  SmallVector<Value> stateIdx(Value d, Value n, Value j) const {
    return c.batchFirst ? SmallVector<Value>{n, d, j}
                        : SmallVector<Value>{d, n, j};
  }
  SmallVector<Value> xIdx(Value t, Value n, Value k) const {
    return c.batchFirst ? SmallVector<Value>{n, t, k}
                        : SmallVector<Value>{t, n, k};
  }
  SmallVector<Value> yIdx(Value t, Value d, Value n, Value j) const {
    return c.batchFirst ? SmallVector<Value>{n, t, d, j}
                        : SmallVector<Value>{t, d, n, j};
  }
  Value offset(Builder &b, Value j, int64_t by) const {
    return by == 0 ? j : b.create<arith::AddIOp>(j, cIndex(b, by)).getResult();
  }

  /// min(max(v, -clip), clip) when clip is set, as the reference's clipped.
  Value clipped(Builder &b, Value v) const {
    if (!c.clip)
      return v;
    return clampLikeStd(b, v, cF64(b, -*c.clip), cF64(b, *c.clip));
  }
  /// Activation `slot` of direction `d` on clipped(v); when the directions
  /// use different ones, both are computed and d picks.
  Value act(Builder &b, Value d, unsigned slot, Value v) const {
    size_t perDir = activationCount(c.kind);
    v = clipped(b, v);
    Value r = activate(b, c.acts[slot], v);
    if (c.dirs == 1 || c.acts[perDir + slot] == c.acts[slot])
      return r;
    Value back =
        b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, d, cIndex(b, 1));
    return b.create<arith::SelectOp>(back,
                                     activate(b, c.acts[perDir + slot], v), r);
  }

  /// fn(b, t) for batch row n of direction d at `step` when the row's
  /// sequence is still running, t being the time index the step reads.
  void atStep(Builder &b, Value d, Value n, Value step,
              function_ref<void(Builder &, Value t)> fn,
              function_ref<void(Builder &)> done = nullptr) const {
    Value len = lens ? toIndex(b, load(b, lens, {n})) : cIndex(b, c.seq);
    Value back = b.create<arith::SubIOp>(
        b.create<arith::SubIOp>(len, cIndex(b, 1)), step);
    Value t = step;
    if (c.reverseOnly)
      t = back;
    else if (c.dirs == 2)
      t = b.create<arith::SelectOp>(
          b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, d, cIndex(b, 1)),
          back, step);
    if (!lens) {
      fn(b, t);
      return;
    }
    Value live = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, step, len);
    ifThenElse(
        b, live, [&](Builder &b) { fn(b, t); }, done);
  }

  void readLengths(Builder &b);
  void initialState(Builder &b);
  void inputProjection(Builder &b);
  void step(Builder &b, Value step);
  void gruResetProduct(Builder &b, Value step);
  void update(Builder &b, Value step);
  void finalState(Builder &b);
};

/// lens[n] = clamp(sequence_lens[n], 0, seq); an entry outside that range
/// fails the run, as the reference does.
void CellLowering::readLengths(Builder &b) {
  if (!has(kSeqLens))
    return;
  Elem e = elemOf(p.op->getOperand(kSeqLens));
  lens = scratch.alloc({c.batch}, b.getI64Type());
  Value bad =
      loop(b, cIndex(b, 0), cIndex(b, c.batch),
           {b.create<arith::ConstantIntOp>(0, 1)},
           [&](Builder &b, ValueRange n, ValueRange acc) {
             Value len = toI64(b, load(b, p.operands[kSeqLens], {n[0]}), e);
             Value lo = cInt(b, b.getI64Type(), 0),
                   hi = cInt(b, b.getI64Type(), c.seq);
             Value outside = b.create<arith::OrIOp>(
                 b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, len, lo),
                 b.create<arith::CmpIOp>(arith::CmpIPredicate::sgt, len, hi));
             Value clamped = b.create<arith::MinSIOp>(
                 b.create<arith::MaxSIOp>(len, lo), hi);
             store(b, clamped, lens, {n[0]});
             return SmallVector<Value>{b.create<arith::OrIOp>(acc[0], outside)};
           })[0];
  p.failIf(bad, "sequence_lens has an entry outside [0, " +
                    std::to_string(c.seq) + "]");
}

/// h and c from initial_h and initial_c (zero without them); Y zero where
/// sequence_lens leaves steps out.
void CellLowering::initialState(Builder &b) {
  if (lens && hasResult(0))
    parallelLoops(
        b, shapeOf(p.op->getResult(0)),
        [&](Builder &b, ValueRange ivs) { out(b, 0, cF64(b, 0.0), ivs); });
  parallelLoops(
      b, {c.dirs, c.batch, c.hidden}, [&](Builder &b, ValueRange ivs) {
        SmallVector<Value> at = stateIdx(ivs[0], ivs[1], ivs[2]);
        store(b, has(kInitH) ? in(b, kInitH, at) : cF64(b, 0.0), h, ivs);
        if (cState)
          store(b, has(kInitC) ? in(b, kInitC, at) : cF64(b, 0.0), cState, ivs);
      });
}

/// xw[d, t, n, j] = Wb[d, j] + X[t, n, :] . W[d, j, :], from a copy of X in
/// f64 (converted once, not once per output unit); the unit is the outer
/// dim so that its row of W stays in cache over all the steps.
void CellLowering::inputProjection(Builder &b) {
  Value x64 = scratch.alloc({c.seq, c.batch, c.input}, b.getF64Type());
  parallelLoops(b, {c.seq, c.batch, c.input}, [&](Builder &b, ValueRange ivs) {
    store(b, in(b, kX, xIdx(ivs[0], ivs[1], ivs[2])), x64, ivs);
  });
  parallelLoops(b, {c.dirs, gh, c.seq, c.batch},
                [&](Builder &b, ValueRange ivs) {
                  Value d = ivs[0], j = ivs[1], t = ivs[2], n = ivs[3];
                  Value s = dot(
                      b, c.input,
                      [&](Builder &b, Value k) {
                        return load(b, x64, {t, n, k});
                      },
                      [&](Builder &b, Value k) {
                        return in(b, kW, {d, j, k});
                      });
                  if (has(kB))
                    s = b.create<arith::AddFOp>(in(b, kB, {d, j}), s);
                  store(b, s, xw, {d, t, n, j});
                });
}

/// One time step: the recurrent product for every gate GRU's update needs,
/// then the update.
void CellLowering::step(Builder &b, Value step) {
  int64_t rows = cast<MemRefType>(hr.getType()).getShape()[2];
  parallelLoops(b, {c.dirs, c.batch, rows}, [&](Builder &b, ValueRange ivs) {
    Value d = ivs[0], n = ivs[1], j = ivs[2];
    Value s = dot(
        b, c.hidden,
        [&](Builder &b, Value k) {
          return load(b, h, {d, n, k});
        },
        [&](Builder &b, Value k) {
          return in(b, kR, {d, j, k});
        });
    if (has(kB))
      s = b.create<arith::AddFOp>(in(b, kB, {d, offset(b, j, gh)}), s);
    store(b, s, hr, ivs);
  });
  if (rh)
    gruResetProduct(b, step);
  update(b, step);
}

/// GRU without linear_before_reset: rhr = (r . H) Rh^T + Rbh, where r is
/// the reset gate of this step. Rows whose sequence is done get r . H = 0
/// (their product is not used).
void CellLowering::gruResetProduct(Builder &b, Value step) {
  int64_t hs = c.hidden;
  parallelLoops(b, {c.dirs, c.batch, hs}, [&](Builder &b, ValueRange ivs) {
    Value d = ivs[0], n = ivs[1], j = ivs[2];
    atStep(
        b, d, n, step,
        [&](Builder &b, Value t) {
          Value jr = offset(b, j, hs);
          Value pre = b.create<arith::AddFOp>(load(b, xw, {d, t, n, jr}),
                                              load(b, hr, {d, n, jr}));
          Value r = act(b, d, 0, pre);
          store(b, b.create<arith::MulFOp>(r, load(b, h, ivs)), rh, ivs);
        },
        [&](Builder &b) { store(b, cF64(b, 0.0), rh, ivs); });
  });
  parallelLoops(b, {c.dirs, c.batch, hs}, [&](Builder &b, ValueRange ivs) {
    Value d = ivs[0], n = ivs[1], j = ivs[2];
    Value s = dot(
        b, hs,
        [&](Builder &b, Value k) {
          return load(b, rh, {d, n, k});
        },
        [&](Builder &b, Value k) {
          return in(b, kR, {d, offset(b, j, 2 * hs), k});
        });
    if (has(kB))
      s = b.create<arith::AddFOp>(in(b, kB, {d, offset(b, j, gh + 2 * hs)}), s);
    store(b, s, rhr, ivs);
  });
}

/// The gates and the new state of every (direction, row, unit), written to
/// h, c and Y[t].
void CellLowering::update(Builder &b, Value step) {
  int64_t hs = c.hidden;
  parallelLoops(b, {c.dirs, c.batch, hs}, [&](Builder &b, ValueRange ivs) {
    Value d = ivs[0], n = ivs[1], j = ivs[2];
    atStep(b, d, n, step, [&](Builder &b, Value t) {
      auto add = [&](Value l, Value r) {
        return b.create<arith::AddFOp>(l, r).getResult();
      };
      auto mul = [&](Value l, Value r) {
        return b.create<arith::MulFOp>(l, r).getResult();
      };
      auto one = [&] { return cF64(b, 1.0); };
      // Gate g's pre-activation parts: X W^T + Wb and H R^T + Rb.
      auto gx = [&](int64_t g) {
        return load(b, xw, {d, t, n, offset(b, j, g * hs)});
      };
      auto gh = [&](int64_t g) {
        return load(b, hr, {d, n, offset(b, j, g * hs)});
      };
      Value hPrev = load(b, h, ivs), hNew;
      if (c.kind == Cell::Rnn) {
        hNew = act(b, d, 0, add(gx(0), gh(0)));
      } else if (c.kind == Cell::Lstm) {
        // Gate order i, o, f, c; peepholes P[iof].
        Value cPrev = load(b, cState, ivs);
        auto peep = [&](Value v, int64_t g, Value cv) {
          if (!has(kP))
            return v;
          return add(v, mul(in(b, kP, {d, offset(b, j, g * hs)}), cv));
        };
        Value it = act(b, d, 0, peep(add(gx(0), gh(0)), 0, cPrev));
        Value ft = c.inputForget
                       ? b.create<arith::SubFOp>(one(), it).getResult()
                       : act(b, d, 0, peep(add(gx(2), gh(2)), 2, cPrev));
        Value ct = act(b, d, 1, add(gx(3), gh(3)));
        Value cNew = add(mul(ft, cPrev), mul(it, ct));
        Value ot = act(b, d, 0, peep(add(gx(1), gh(1)), 1, cNew));
        store(b, cNew, cState, ivs);
        hNew = mul(ot, act(b, d, 2, cNew));
      } else {
        // GRU, gate order z, r, h.
        Value zt = act(b, d, 0, add(gx(0), gh(0)));
        Value pre =
            c.linearBeforeReset
                ? add(gx(2), mul(act(b, d, 0, add(gx(1), gh(1))), gh(2)))
                : add(gx(2), load(b, rhr, ivs));
        Value ht = act(b, d, 1, pre);
        hNew = add(mul(b.create<arith::SubFOp>(one(), zt), ht), mul(zt, hPrev));
      }
      store(b, hNew, h, ivs);
      if (hasResult(0))
        out(b, 0, hNew, yIdx(t, d, n, j));
    });
  });
}

/// Y_h and Y_c from the final state.
void CellLowering::finalState(Builder &b) {
  for (unsigned r : {1u, 2u}) {
    Value state = r == 1 ? h : cState;
    if (!hasResult(r) || !state)
      continue;
    parallelLoops(
        b, {c.dirs, c.batch, c.hidden}, [&](Builder &b, ValueRange ivs) {
          out(b, r, load(b, state, ivs), stateIdx(ivs[0], ivs[1], ivs[2]));
        });
  }
}

template <typename OpT> LogicalResult lowerCell(PortableOp &p) {
  FailureOr<CellSpec> spec = readSpec(cast<OpT>(p.op));
  if (failed(spec))
    return failure();
  const CellSpec &c = *spec;
  Builder b(p.loc, p.b);
  shapeBuffers(b, p);
  nn::Scratch scratch(b, p.loc);
  Type f64 = b.getF64Type();
  int64_t gh = c.gates * c.hidden;
  bool resetProduct = c.kind == Cell::Gru && !c.linearBeforeReset;
  CellLowering l{p, c, gh, scratch};
  l.xw = scratch.alloc({c.dirs, c.seq, c.batch, gh}, f64);
  l.h = scratch.alloc({c.dirs, c.batch, c.hidden}, f64);
  if (c.kind == Cell::Lstm)
    l.cState = scratch.alloc({c.dirs, c.batch, c.hidden}, f64);
  // GRU without linear_before_reset has its own product for the h gate.
  l.hr =
      scratch.alloc({c.dirs, c.batch, resetProduct ? 2 * c.hidden : gh}, f64);
  if (resetProduct) {
    l.rh = scratch.alloc({c.dirs, c.batch, c.hidden}, f64);
    l.rhr = scratch.alloc({c.dirs, c.batch, c.hidden}, f64);
  }
  l.readLengths(b);
  l.initialState(b);
  l.inputProjection(b);
  loop(b, cIndex(b, 0), cIndex(b, c.seq), {},
       [&](Builder &b, ValueRange step, ValueRange) {
         l.step(b, step[0]);
         return SmallVector<Value>{};
       });
  l.finalState(b);
  scratch.release();
  return success();
}

} // namespace

void registerPortableRecurrent(PortableRegistry &registry) {
  registry["graph.lstm"] = &lowerCell<graph::LSTMOp>;
  registry["graph.gru"] = &lowerCell<graph::GRUOp>;
  registry["graph.rnn"] = &lowerCell<graph::RNNOp>;
}

} // namespace mlcc::portable
