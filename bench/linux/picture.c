/*
 * picture: writes a deterministic picture as a binary PPM (P6), the input
 * of the application benchmarks' JPEG and TIFF rows (bench/apps/apps.sh):
 *
 *     picture WIDTH HEIGHT FILE
 *
 * A smooth diagonal gradient, overlapping discs in many colours with soft
 * edges, a band of fine stripes and a grain of pseudo-random noise, as a
 * photograph has: all in integer arithmetic, so that every system gets
 * the same bytes. It is static (musl), in the root archive beside lxbench.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Colour c of disc k, 0..255. */
static int disc_colour(int k, int c)
{
    return (int)((k * 97u + c * 71u + k * c * 13u) % 200u) + 40;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: picture WIDTH HEIGHT FILE\n");
        return 2;
    }
    int w = atoi(argv[1]), h = atoi(argv[2]);
    FILE *f = fopen(argv[3], "wb");
    if (w <= 0 || h <= 0 || w > 20000 || h > 20000 || !f) {
        fprintf(stderr, "picture: bad size or cannot write %s\n", argv[3]);
        return 1;
    }
    unsigned char *row = malloc((size_t)w * 3);
    if (!row)
        return 1;
    fprintf(f, "P6\n%d %d\n255\n", w, h);
    uint32_t seed = 12345;
    enum { DISCS = 24 };
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            int rgb[3] = { 40 + 160 * x / w, 60 + 120 * (x + y) / (w + h), 200 - 150 * y / h };
            for (int k = 0; k < DISCS; k++) {
                int cx = (int)((k * 7919u) % (unsigned)w), cy = (int)((k * 104729u) % (unsigned)h);
                int r = w / 12 + (k * 37) % (w / 8 + 1);
                int64_t dx = x - cx, dy = y - cy, d2 = dx * dx + dy * dy, r2 = (int64_t)r * r;
                if (d2 >= r2)
                    continue;
                int a = (int)(256 - 256 * d2 / r2);         /* opacity: 256 at the centre, 0 at the edge */
                a = a > 160 ? 160 : a;
                for (int c = 0; c < 3; c++)
                    rgb[c] = (rgb[c] * (256 - a) + disc_colour(k, c) * a) >> 8;
            }
            if (y > h / 2 && y < h / 2 + h / 10)                /* fine stripes */
                for (int c = 0; c < 3; c++)
                    rgb[c] = ((x / 3 + y / 5 + c) & 1) ? rgb[c] * 3 / 4 : rgb[c];
            seed = seed * 1103515245u + 12345u;                 /* grain: -8..7 */
            int grain = (int)((seed >> 16) & 15) - 8;
            for (int c = 0; c < 3; c++) {
                int v = rgb[c] + grain;
                row[x * 3 + c] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
        if (fwrite(row, 3, (size_t)w, f) != (size_t)w)
            break;
    }
    free(row);
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "picture: writing %s: %s\n", argv[3], strerror(errno));
        return 1;
    }
    return 0;
}
