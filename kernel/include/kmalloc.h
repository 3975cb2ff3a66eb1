/* Small kernel allocations (objects, tables) from power-of-two size classes. */
#ifndef PETREL_KMALLOC_H
#define PETREL_KMALLOC_H

#include "types.h"

void *kmalloc(size_t size);         /* zeroed; NULL when out of memory; size <= 2048 */
void kfree(void *p, size_t size);   /* size as given to kmalloc */
uint64_t kmalloc_in_use(void);      /* bytes currently allocated */
uint32_t kmalloc_size(size_t size); /* bytes a kmalloc of `size` really takes (its class) */

#endif
