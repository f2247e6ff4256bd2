/* alloc.c - the kernel's allocator and its reference-counted array blocks. It calls
 * nothing of the kernel: every file that allocates sits above it. */
#include "springsim.h"

#include <stdlib.h>
#include <string.h>

/* ---- Allocation -------------------------------------------------------- */

static ss_allocator allocator = {malloc, free};

void ss_set_allocator(ss_allocator a) {
    allocator = a;
}

void *ss_malloc(size_t size) {
    return allocator.malloc(size ? size : 1);
}

void ss_free(void *ptr) {
    if (ptr)
        allocator.free(ptr);
}

ss_buffer *ss_buffer_new(size_t capacity) {
    if (capacity > SIZE_MAX - sizeof(ss_buffer))
        return NULL;
    const size_t pad = SS_PAD_DOUBLES * sizeof(double);
    if (capacity > SIZE_MAX - sizeof(ss_buffer) - pad)
        return NULL;
    ss_buffer *buf = ss_malloc(sizeof(ss_buffer) + capacity + pad);
    if (!buf)
        return NULL;
    memset((char *)buf->data + capacity, 0, pad);
    buf->refcount = 1;
    buf->capacity = capacity;
    return buf;
}

void ss_buffer_retain(ss_buffer *buf) {
    buf->refcount++;
}

void ss_buffer_release(ss_buffer *buf) {
    if (buf && --buf->refcount == 0)
        ss_free(buf);
}
