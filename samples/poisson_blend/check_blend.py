#!/usr/bin/python3
"""The sample's test: runs the poisson_blend program on the bundled images
and checks, for both models (the while loop to a tolerance and the fixed
for loop) and both starting images:

  - its output against the reference executor running the same graph
    (`mlcc run MODEL --target ref`): the same iteration count, pixels within
    1e-5 (the AVX-512 stencil sums in f32 where the reference sums in double);
  - the seam error: on the pixels inside the mask next to its border, how far
    the result is from solving the blending equation, as the size of the
    Jacobi update it would still make: |(neighbours + laplacian(source))/4 - f|.
    Where the loop stops at a change of 1e-4 this must be at most 1e-4 (the
    iteration is a contraction), and it must have dropped from what the
    pasted source has (over 100x the tolerance).

    check_blend.py POISSON_BLEND_EXE MLCC_EXE SAMPLE_DIR WORK_DIR
"""

import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

TOL = 1e-4


def read_image(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, w, h, _, pixels = data.split(maxsplit=4)
    channels = 3 if magic == b"P6" else 1
    a = np.frombuffer(pixels, np.uint8)[-int(w) * int(h) * channels:]
    a = a.reshape(int(h), int(w), channels).astype(np.float32) / 255
    return a.transpose(2, 0, 1)[:, None]  # [C, 1, H, W]


def neighbours(f):
    p = np.pad(f, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="edge")
    return p[..., :-2, 1:-1] + p[..., 2:, 1:-1] + p[..., 1:-1, :-2] + p[..., 1:-1, 2:]


def seam_error(f, source, mask):
    guide = 4 * source - neighbours(source)
    update = np.abs((neighbours(f) + guide) / 4 - f)
    inside = mask[0, 0] > 0.5
    p = np.pad(inside, 1)
    border = inside & ~(p[:-2, 1:-1] & p[2:, 1:-1] & p[1:-1, :-2] & p[1:-1, 2:])
    return float(update[:, 0][:, border].max())


def main():
    exe, mlcc, sample, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    data = os.path.join(sample, "data")
    images = [os.path.join(data, n) for n in ("source.ppm", "background.ppm", "mask.pgm")]
    source, background, mask = [read_image(p) for p in images]
    pasted = source * mask + background * (1 - mask)
    failures = 0
    for model, fixed in (("poisson_blend.mlir", False), ("poisson_blend_fixed.mlir", True)):
        for init in ("source", "background"):
            what = "%s from the %s" % (model, init)
            run = os.path.join(work, "%s_%s" % (model.split(".")[0], init))
            os.makedirs(run, exist_ok=True)
            args = [exe] + images + [os.path.join(run, "out.ppm"), "--init", init,
                                      "--raw", os.path.join(run, "out.f32")]
            out = subprocess.run(args + (["--fixed"] if fixed else []),
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print("FAIL %s: the program failed: %s" % (what, out.stderr))
                failures += 1
                continue
            iterations = int(out.stdout.split(" in ")[1].split()[0])
            got = np.fromfile(os.path.join(run, "out.f32"), np.float32).reshape(source.shape)

            inputs = [("source", source), ("background", background), ("mask", mask),
                      ("from_source", np.array(init == "source"))]
            for i, (name, a) in enumerate(inputs):
                with open(os.path.join(run, "input_%d.pb" % i), "wb") as f:
                    f.write(numpy_helper.from_array(a, name).SerializeToString())
            subprocess.run([mlcc, "run", os.path.join(sample, model), "--target", "ref",
                            "--data", run, "--save", run], check=True, capture_output=True)
            ref = [numpy_helper.to_array(onnx.load_tensor(os.path.join(run, "output_%d.pb" % i)))
                   for i in range(2)]
            diff = float(np.abs(got - ref[0]).max())
            seam = seam_error(got, source, mask)
            start = seam_error(pasted if init == "source" else background, source, mask)
            print("%s: %d iterations (ref %d), max abs diff to ref %.3g, "
                  "seam error %.3g (at the start %.3g)"
                  % (what, iterations, int(ref[1]), diff, seam, start))
            ok = iterations == int(ref[1]) and diff <= 1e-5 and start > 100 * TOL
            if not fixed:
                ok = ok and seam <= TOL
            if not ok:
                print("FAIL %s" % what)
                failures += 1
    print("poisson_blend: %s" % ("all checks passed" if failures == 0 else "%d failed" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
