/*
 * Kernel configuration. The options of kernel/Kconfig arrive as
 * constants from the generated autoconf.h (build/.config, made from
 * configs/defconfig); code tests them with `if`, never with #ifdef inside
 * a function.
 */
#ifndef PETREL_CONFIG_H
#define PETREL_CONFIG_H

#include "autoconf.h"

#ifndef CONFIG_KTEST
#define CONFIG_KTEST        0   /* in-kernel self tests (the kernel-test build), run with bootarg "ktest" */
#endif

#endif
