/* sanitizer.h — tells ASan and TSan about our stack switches, so that
 * `make test SAN=...` checks tasks instead of reporting false positives. */
#ifndef TASKHOP_SANITIZER_H
#define TASKHOP_SANITIZER_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define TH_ASAN 1
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__SANITIZE_THREAD__)
#define TH_TSAN 1
#include <sanitizer/tsan_interface.h>
#endif

/* Call right before th_ctx_switch. fake == NULL: the current stack dies. */
static inline void th_san_start_switch(void **fake, const void *bottom, size_t size)
{
#ifdef TH_ASAN
	__sanitizer_start_switch_fiber(fake, bottom, size);
#else
	(void)fake, (void)bottom, (void)size;
#endif
}

/* Call first thing after th_ctx_switch returns (or a new stack starts). */
static inline void th_san_finish_switch(void *fake)
{
#ifdef TH_ASAN
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
	(void)fake;
#endif
}

static inline void *th_tsan_create(void)
{
#ifdef TH_TSAN
	return __tsan_create_fiber(0);
#else
	return NULL;
#endif
}
static inline void *th_tsan_current(void)
{
#ifdef TH_TSAN
	return __tsan_get_current_fiber();
#else
	return NULL;
#endif
}
static inline void th_tsan_switch(void *fiber)
{
#ifdef TH_TSAN
	__tsan_switch_to_fiber(fiber, 0);
#else
	(void)fiber;
#endif
}
static inline void th_tsan_destroy(void *fiber)
{
#ifdef TH_TSAN
	if (fiber)
		__tsan_destroy_fiber(fiber);
#else
	(void)fiber;
#endif
}

/* A reused stack may carry ASan poison from frames that never returned. */
static inline void th_asan_unpoison(void *p, size_t n)
{
#ifdef TH_ASAN
	__asan_unpoison_memory_region(p, n);
#else
	(void)p, (void)n;
#endif
}

#endif
