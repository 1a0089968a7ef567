/* hogs.h — two spinning processes (not followed by any recorder) beside the runtime's
 * workers: on a 2-CPU machine the workers are then preempted and wait in run queues. */
#ifndef TASKHOP_TEST_HOGS_H
#define TASKHOP_TEST_HOGS_H

/* Starts them (each dies after 60 s at most, should a test crash). */
void hogs_start(void);
/* Kills and reaps them; safe to call when none runs (a teardown). */
void hogs_stop(void);

#endif
