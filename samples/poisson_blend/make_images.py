#!/usr/bin/python3
"""Writes the sample's small test images into data/ (generated here, so the
repository ships no downloaded pictures): a 64x64 source with a striped,
shaded ball on a flat grey, a background of a sky-to-sand gradient with a
horizon, and a mask (PGM) of a disc around the ball.

    /usr/bin/python3 samples/poisson_blend/make_images.py
"""

import os

import numpy as np

SIZE = 64
HERE = os.path.dirname(os.path.abspath(__file__))


def write_ppm(path, rgb):
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (rgb.shape[1], rgb.shape[0]))
        f.write(np.clip(np.rint(rgb * 255), 0, 255).astype(np.uint8).tobytes())


def write_pgm(path, gray):
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (gray.shape[1], gray.shape[0]))
        f.write(np.clip(np.rint(gray * 255), 0, 255).astype(np.uint8).tobytes())


def main():
    y, x = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64) / (SIZE - 1)
    # Source: a ball with stripes and shading on a flat grey the blend
    # should not carry over.
    r = np.hypot(x - 0.5, y - 0.5)
    ball = r < 0.22
    shade = np.clip(1.0 - 2.5 * np.hypot(x - 0.42, y - 0.42), 0.2, 1.0)
    stripes = 0.5 + 0.5 * np.sin(40 * (x + 0.5 * y))
    source = np.full((SIZE, SIZE, 3), 0.45)
    for c, tint in enumerate((0.95, 0.35 + 0.4 * stripes, 0.15)):
        source[..., c] = np.where(ball, shade * tint, source[..., c])
    # Background: sky over sand.
    sky = np.stack([0.35 + 0.3 * y, 0.55 + 0.25 * y, 0.95 - 0.1 * y], -1)
    sand = np.stack([0.85 - 0.1 * y, 0.75 - 0.1 * y, 0.5 - 0.05 * y], -1)
    background = np.where((y > 0.6)[..., None], sand, sky)
    mask = (r < 0.28).astype(np.float64)
    os.makedirs(os.path.join(HERE, "data"), exist_ok=True)
    write_ppm(os.path.join(HERE, "data", "source.ppm"), source)
    write_ppm(os.path.join(HERE, "data", "background.ppm"), background)
    write_pgm(os.path.join(HERE, "data", "mask.pgm"), mask)


if __name__ == "__main__":
    main()
