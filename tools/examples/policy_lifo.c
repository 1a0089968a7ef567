/* policy_lifo.c — a complete taskhop policy plugin: one global stack, the newest
 * runnable task runs first. Built by `make` as build/examples/policy_lifo.so. */

/*
 * A policy in a page, to copy when you try an idea of your own.
 *
 *     taskhop run darts --policy ./build/examples/policy_lifo.so --small 1e6 --large 1e8
 *
 * The runtime hands a policy every task that becomes runnable (push: just spawned,
 * yielded, or woken) and asks it, on each worker that is free, for the task to run
 * next (pop). That is the whole interface (<taskhop/policy.h>): stacks, context
 * switches, blocking, waking idle workers, counters and the recorder's probes stay in
 * the runtime, and none of them change when you load another policy.
 *
 * This one keeps runnable tasks on a stack: the task pushed last is popped first, by
 * whichever worker asks. Most runtimes run a spawned child before older work for the
 * same reason a work-stealing deque's owner pops LIFO: the child's data is still in the
 * cache. But a stack has no notion of age, so at a yield the task that just yielded is
 * the newest and comes back first once the task it gave way to yields in turn: two
 * tasks take turns on a worker while older ones wait, and a task spawned early can
 * starve while newer ones keep yielding. On one worker, four tasks spawned 1..4 that
 * each yield run as 4 3 4 3 ... 2 1 2 1, where the `shared` FIFO runs 1 2 3 4 1 2 3 4.
 *
 * The rules a policy keeps (taskhop/policy.h says them in full):
 *  - push and pop are called from every worker at once: lock what you share;
 *  - between push and pop, a task's link and word are yours (th_task_link, th_task_word);
 *  - a sticky task (th_spawn_on) may only be popped by its home worker, so those wait
 *    in a stack of their own per worker, which that worker looks at first.
 */
#include <pthread.h>
#include <stdlib.h>

#include <taskhop/policy.h>

struct stack {
	pthread_mutex_t lock;
	th_task *top;
};

static struct stack global = { PTHREAD_MUTEX_INITIALIZER, NULL };
static struct stack *sticky; /* one per worker */
static int nworkers;

static void stack_push(struct stack *s, th_task *t)
{
	pthread_mutex_lock(&s->lock);
	*th_task_link(t) = s->top;
	s->top = t;
	pthread_mutex_unlock(&s->lock);
}

static th_task *stack_pop(struct stack *s)
{
	pthread_mutex_lock(&s->lock);
	th_task *t = s->top;
	if (t)
		s->top = *th_task_link(t);
	pthread_mutex_unlock(&s->lock);
	return t;
}

static int lifo_init(int n)
{
	sticky = calloc((size_t)n, sizeof(*sticky));
	if (!sticky) {
		th_policy_error("lifo: out of memory for %d workers", n);
		return -1;
	}
	for (int i = 0; i < n; i++)
		pthread_mutex_init(&sticky[i].lock, NULL);
	nworkers = n;
	return 0;
}

static void lifo_fini(void)
{
	for (int i = 0; i < nworkers; i++)
		pthread_mutex_destroy(&sticky[i].lock);
	free(sticky);
	sticky = NULL;
}

/* Returns the worker to wake: the home of a sticky task, else any idle one. */
static int lifo_push(int self, th_task *t, enum th_why why)
{
	(void)self, (void)why;
	if (th_task_sticky(t)) {
		int home = th_task_home(t); /* once pushed, t may run and end elsewhere */
		stack_push(&sticky[home], t);
		return home;
	}
	stack_push(&global, t);
	return -1;
}

static th_task *lifo_pop(int worker)
{
	th_task *t = stack_pop(&sticky[worker]);
	return t ? t : stack_pop(&global);
}

const struct th_policy_ops th_policy_plugin = {
	.abi_version = TH_POLICY_ABI_VERSION,
	.name = "lifo",
	.description = "one global stack: the newest runnable task runs first",
	.init = lifo_init,
	.fini = lifo_fini,
	.push = lifo_push,
	.pop = lifo_pop,
};
