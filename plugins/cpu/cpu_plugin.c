/* Lifecycle and memory of every CPU plugin (cpu_plugin.h).
 *
 * A buffer's impl is the host address of its byte 0. Allocated buffers are
 * 64-byte aligned (a cache line, a full AVX-512 vector); from 2 MiB up they
 * start on a huge-page boundary with transparent huge pages asked for
 * (madvise), because weights copied into them are streamed once per token:
 * on 4 KiB pages every 4 KiB is a TLB miss and a point where the hardware
 * prefetcher stops. Wrapped buffers are the caller's memory and must not be
 * freed, so the context remembers which addresses it wrapped (few, and
 * looked up only when a buffer is freed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>

#include "cpu_plugin.h"

#define BUFFER_ALIGN 64
#define HUGE_PAGE (2u << 20)
#define MAX_THREADS 1024

/* struct cpu_state first, so ops see the shared part through st. */
struct cpu_context {
	struct cpu_state s;
	pthread_mutex_t wrap_lock;
	void **wrapped;         /* host addresses handed out by buffer_wrap */
	size_t n_wrapped, cap_wrapped;
};

gllmk_status cpu_open(const gllmk_open_args *args, void **state, char *reason, size_t reason_len,
		      const struct cpu_cntx *k)
{
	struct cpu_context *c;
	int n_threads;

	if (!args || args->struct_size < offsetof(gllmk_open_args, host) + sizeof(args->host) || !args->host) {
		snprintf(reason, reason_len, "open arguments too short for ABI %d (no host)", GLLMK_ABI_MAJOR);
		return GLLMK_E_INVALID;
	}
	n_threads = args->n_threads > 0 ? args->n_threads : cpu_physical_cores();
	if (n_threads > MAX_THREADS)
		n_threads = MAX_THREADS;

	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(reason, reason_len, "out of memory for the %s context", k->isa);
		return GLLMK_E_NO_MEMORY;
	}
	c->s.pool = cpu_pool_create(n_threads);
	if (!c->s.pool) {
		snprintf(reason, reason_len, "could not start %d worker threads", n_threads - 1);
		free(c);
		return GLLMK_E_NO_MEMORY;
	}
	c->s.host = args->host;
	c->s.k = k;
	c->s.n_threads = cpu_pool_threads(c->s.pool);
	c->s.bf16_act = (args->flags & GLLMK_OPEN_BF16_ACTIVATIONS) && k->bf16_ukernel;
	pthread_mutex_init(&c->wrap_lock, NULL);
	*state = c;
	return GLLMK_OK;
}

void cpu_close(void *state)
{
	struct cpu_context *c = state;

	if (!c)
		return;
	cpu_pool_destroy(c->s.pool);
	pthread_mutex_destroy(&c->wrap_lock);
	free(c->wrapped);
	free(c);
}

gllmk_status cpu_buffer_alloc(void *st, uint64_t size, void **impl)
{
	struct cpu_state *s = st;
	uint64_t rounded = (size + BUFFER_ALIGN - 1) / BUFFER_ALIGN * BUFFER_ALIGN;
	void *p;

	if (rounded == 0)
		rounded = BUFFER_ALIGN;
	if (rounded < size || rounded > SIZE_MAX)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_buffer_alloc: %s: a buffer of %llu bytes does not fit in memory",
					  s->k->isa, (unsigned long long)size);
	if (rounded >= HUGE_PAGE && rounded <= SIZE_MAX - HUGE_PAGE) {
		rounded = (rounded + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
		p = aligned_alloc(HUGE_PAGE, (size_t)rounded);
#ifdef MADV_HUGEPAGE
		if (p)
			madvise(p, (size_t)rounded, MADV_HUGEPAGE); /* a hint: failure is fine */
#endif
	} else {
		p = aligned_alloc(BUFFER_ALIGN, (size_t)rounded);
	}
	if (!p)
		return s->host->set_error(GLLMK_E_NO_MEMORY, "gllmk_buffer_alloc: %s: cannot allocate %llu bytes", s->k->isa,
					  (unsigned long long)size);
	*impl = p;
	return GLLMK_OK;
}

gllmk_status cpu_buffer_wrap(void *st, void *host, uint64_t size, void **impl)
{
	struct cpu_context *c = st;
	gllmk_status ret = GLLMK_OK;

	(void)size;
	if ((uintptr_t)host % 4)
		return c->s.host->set_error(GLLMK_E_ALIGN, "gllmk_buffer_wrap: %s: host = %p is not 4-byte aligned",
					    c->s.k->isa, host);
	pthread_mutex_lock(&c->wrap_lock);
	if (c->n_wrapped == c->cap_wrapped) {
		size_t cap = c->cap_wrapped ? 2 * c->cap_wrapped : 16;
		void **w = realloc(c->wrapped, cap * sizeof(*w));

		if (w) {
			c->wrapped = w;
			c->cap_wrapped = cap;
		}
	}
	if (c->n_wrapped < c->cap_wrapped)
		c->wrapped[c->n_wrapped++] = host;
	else
		ret = c->s.host->set_error(GLLMK_E_NO_MEMORY, "gllmk_buffer_wrap: %s: no memory to record the wrapped buffer", c->s.k->isa);
	pthread_mutex_unlock(&c->wrap_lock);
	if (ret == GLLMK_OK)
		*impl = host;
	return ret;
}

/* Forgets one wrap of p; false if p was not wrapped (then it is ours). */
static int forget_wrapped(struct cpu_context *c, void *p)
{
	int found = 0;

	pthread_mutex_lock(&c->wrap_lock);
	for (size_t i = c->n_wrapped; i-- > 0;) {
		if (c->wrapped[i] == p) {
			c->wrapped[i] = c->wrapped[--c->n_wrapped];
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&c->wrap_lock);
	return found;
}

void cpu_buffer_free(void *st, void *impl)
{
	if (impl && !forget_wrapped(st, impl))
		free(impl);
}

gllmk_status cpu_buffer_write(void *st, void *impl, uint64_t off, const void *src, uint64_t size)
{
	(void)st;
	memcpy((char *)impl + off, src, size);
	return GLLMK_OK;
}

gllmk_status cpu_buffer_read(void *st, void *impl, uint64_t off, void *dst, uint64_t size)
{
	(void)st;
	memcpy(dst, (const char *)impl + off, size);
	return GLLMK_OK;
}

gllmk_status cpu_buffer_copy(void *st, void *dst, uint64_t dst_off, void *src, uint64_t src_off, uint64_t size)
{
	(void)st;
	/* memmove: a copy within one buffer may overlap itself. */
	memmove((char *)dst + dst_off, (const char *)src + src_off, size);
	return GLLMK_OK;
}

/* CPU operators finish before they return: nothing is ever in flight. */
gllmk_status cpu_sync(void *st)
{
	(void)st;
	return GLLMK_OK;
}
