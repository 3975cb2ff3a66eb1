/* Drawing into a 32-bit framebuffer (XRGB8888, blue in the lowest byte):
 * rectangles and text in a 5x7 font, and Linux key codes as the letters
 * they type. Shared by the android-demo system's native application
 * (user/notes) and its Linux program (tests/linux/paint.c), so both draw
 * the same way; header-only, for both toolchains. */
#ifndef PETREL_DRAW_H
#define PETREL_DRAW_H

#include <stdint.h>

struct canvas {
    uint32_t *px;                       /* the framebuffer's first pixel */
    uint32_t width, height, stride;     /* pixels; stride in pixels */
};

/* The rectangle at (x, y), w by h, clipped to the canvas, in colour c. */
static inline void draw_rect(const struct canvas *cv, int x, int y, int w, int h, uint32_t c)
{
    int x1 = x + w, y1 = y + h;
    if (x < 0)
        x = 0;
    if (y < 0)
        y = 0;
    if (x1 > (int)cv->width)
        x1 = (int)cv->width;
    if (y1 > (int)cv->height)
        y1 = (int)cv->height;
    for (int row = y; row < y1; row++)
        for (int col = x; col < x1; col++)
            cv->px[(uint32_t)row * cv->stride + (uint32_t)col] = c;
}

/* A frame of thickness t inside the rectangle. */
static inline void draw_frame(const struct canvas *cv, int x, int y, int w, int h, int t, uint32_t c)
{
    draw_rect(cv, x, y, w, t, c);
    draw_rect(cv, x, y + h - t, w, t, c);
    draw_rect(cv, x, y, t, h, c);
    draw_rect(cv, x + w - t, y, t, h, c);
}

/* The 5x7 glyph of c (digits, capital letters, space and . : / -), seven
 * rows of five bits, the leftmost pixel in bit 4; a filled box for any
 * other character. */
static inline const uint8_t *draw_glyph(char c)
{
    static const uint8_t digits[10][7] = {
        { 0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e }, { 0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e },
        { 0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f }, { 0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e },
        { 0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02 }, { 0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e },
        { 0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e }, { 0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08 },
        { 0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e }, { 0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c },
    };
    static const uint8_t letters[26][7] = {
        { 0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11 }, { 0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e },   /* A B */
        { 0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e }, { 0x1e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1e },   /* C D */
        { 0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f }, { 0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10 },   /* E F */
        { 0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f }, { 0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11 },   /* G H */
        { 0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e }, { 0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c },   /* I J */
        { 0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11 }, { 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f },   /* K L */
        { 0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11 }, { 0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11 },   /* M N */
        { 0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e }, { 0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10 },   /* O P */
        { 0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d }, { 0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11 },   /* Q R */
        { 0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e }, { 0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04 },   /* S T */
        { 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e }, { 0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04 },   /* U V */
        { 0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a }, { 0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11 },   /* W X */
        { 0x11, 0x11, 0x11, 0x0a, 0x04, 0x04, 0x04 }, { 0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f },   /* Y Z */
    };
    static const uint8_t space[7], dot[7] = { 0, 0, 0, 0, 0, 0x0c, 0x0c },
                         colon[7] = { 0, 0x0c, 0x0c, 0, 0x0c, 0x0c, 0 },
                         slash[7] = { 0, 0x01, 0x02, 0x04, 0x08, 0x10, 0 }, dash[7] = { 0, 0, 0, 0x1f, 0, 0, 0 },
                         box[7] = { 0x1f, 0x1f, 0x1f, 0x1f, 0x1f, 0x1f, 0x1f };
    if (c >= '0' && c <= '9')
        return digits[c - '0'];
    if (c >= 'A' && c <= 'Z')
        return letters[c - 'A'];
    return c == ' ' ? space : c == '.' ? dot : c == ':' ? colon : c == '/' ? slash : c == '-' ? dash : box;
}

/* Text at (x, y), each font pixel a square of `scale`, a glyph every 6 * scale pixels; the x after it. */
static inline int draw_text(const struct canvas *cv, int x, int y, int scale, const char *s, uint32_t c)
{
    for (; *s; s++, x += 6 * scale) {
        const uint8_t *g = draw_glyph(*s);
        for (int row = 0; row < 7; row++)
            for (int col = 0; col < 5; col++)
                if ((g[row] >> (4 - col)) & 1)
                    draw_rect(cv, x + col * scale, y + row * scale, scale, scale, c);
    }
    return x;
}

/* What a Linux key code (linux/input-event-codes.h) types: a digit, a
 * capital letter, a space, . / -, or 0 for a key that types nothing. */
static inline char draw_key_char(unsigned code)
{
    static const char row1[] = "1234567890-", row2[] = "QWERTYUIOP", row3[] = "ASDFGHJKL", row4[] = "ZXCVBNM";
    if (code >= 2 && code <= 12)
        return row1[code - 2];
    if (code >= 16 && code <= 25)
        return row2[code - 16];
    if (code >= 30 && code <= 38)
        return row3[code - 30];
    if (code >= 44 && code <= 50)
        return row4[code - 44];
    return code == 57 ? ' ' : code == 52 ? '.' : code == 53 ? '/' : 0;
}

/* ---------------------------------------------------------------- a panel
 * One program's part of the screen in the android-demo system: a title,
 * the text typed into it (8 lines of 16), a square where each click
 * fell, and a last line counting keys and clicks; its frame's colour says
 * whether it has the focus. */
#define PANEL_LINES 8
#define PANEL_COLS  16
#define PANEL_WHITE 0x00ffffffu
#define PANEL_DOTS  32                  /* the clicks' squares kept (the last ones) */

struct panel {
    int x, y, w, h;
    const char *title;
    uint32_t background, frame, focused_frame;
    int focused;
    char text[PANEL_LINES][PANEL_COLS + 1];
    int line, col;
    unsigned keys, clicks;
    int dot_x[PANEL_DOTS], dot_y[PANEL_DOTS];   /* the squares' corners */
};

/* The panel whole: background, frame, title, text, the clicks' squares, counts. */
static inline void panel_draw(const struct canvas *cv, const struct panel *p)
{
    draw_rect(cv, p->x, p->y, p->w, p->h, p->background);
    draw_frame(cv, p->x, p->y, p->w, p->h, 4, p->focused ? p->focused_frame : p->frame);
    draw_text(cv, p->x + 12, p->y + 14, 2, p->title, PANEL_WHITE);
    for (int l = 0; l < PANEL_LINES; l++)
        draw_text(cv, p->x + 12, p->y + 50 + l * 27, 3, p->text[l], 0x00e0e0e0u);
    for (unsigned i = 0; i < p->clicks && i < PANEL_DOTS; i++)
        draw_rect(cv, p->dot_x[i], p->dot_y[i], 9, 9, PANEL_WHITE);
    char counts[48] = "KEYS ", *c = counts + 5;
    unsigned v[2] = { p->keys, p->clicks };
    for (int k = 0; k < 2; k++) {
        char digits[12];
        int n = 0;
        do
            digits[n++] = (char)('0' + v[k] % 10);
        while ((v[k] /= 10) && n < 11);
        while (n)
            *c++ = digits[--n];
        if (!k)
            for (const char *w = " CLICKS "; *w; w++)
                *c++ = *w;
    }
    *c = 0;
    draw_text(cv, p->x + 12, p->y + p->h - 30, 2, counts, PANEL_WHITE);
}

/* A key pressed while the panel has the focus: a character typed, Enter
 * (28) a new line, Backspace (14) one character back. 1 if the text changed. */
static inline int panel_key(struct panel *p, unsigned code)
{
    char ch = draw_key_char(code);
    p->keys++;
    if (code == 28 || (ch && p->col == PANEL_COLS)) {
        p->line = (p->line + 1) % PANEL_LINES;
        p->col = 0;
        p->text[p->line][0] = 0;
    }
    if (code == 14 && p->col > 0)
        p->text[p->line][--p->col] = 0;
    if (ch) {
        p->text[p->line][p->col++] = ch;
        p->text[p->line][p->col] = 0;
    }
    return ch || code == 28 || code == 14;
}

/* A click at (x, y) of the screen: a white square of 9 by 9 around it,
 * kept inside the panel's frame (panel_draw shows it). */
static inline void panel_click(struct panel *p, int x, int y)
{
    int left = x - 4, top = y - 4;
    left = left < p->x + 4 ? p->x + 4 : left > p->x + p->w - 13 ? p->x + p->w - 13 : left;
    top = top < p->y + 4 ? p->y + 4 : top > p->y + p->h - 13 ? p->y + p->h - 13 : top;
    p->dot_x[p->clicks % PANEL_DOTS] = left;
    p->dot_y[p->clicks % PANEL_DOTS] = top;
    p->clicks++;
}

#endif
