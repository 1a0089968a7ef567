/* guard.h — guard.c's entry points: the SIGSEGV handler that names the task whose
 * stack overflowed, and the alternate signal stack each thread needs for it. */
#ifndef TASKHOP_GUARD_H
#define TASKHOP_GUARD_H

#include <stddef.h>

/* At each runtime start (another handler may have been installed since). */
void th__guard_install_process(void);
/* A worker thread's own alternate stack, installed at its start and removed at
 * its end (*altstack holds it in between). */
void th__guard_install_thread(void **altstack);
void th__guard_remove_thread(void **altstack);
/* The same for a kthread-policy task's thread, whose stack is stack_bytes long:
 * returns the alternate stack to give back to leave. */
void *th__guard_enter_task_thread(size_t stack_bytes);
void th__guard_leave_task_thread(void *altstack);

#endif
