/* policy_pop_twice.c — a deliberately wrong policy: pop returns the oldest task but
 * forgets to unlink it, so a task is handed out again while it runs. Debug and
 * sanitizer builds must abort on it (tests/test_policy_contract.c). */
#include <pthread.h>

#include <taskhop/policy.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static th_task *head, *tail;

static int twice_push(int self, th_task *t, enum th_why why)
{
	(void)self, (void)why;
	pthread_mutex_lock(&lock);
	*th_task_link(t) = NULL;
	if (tail)
		*th_task_link(tail) = t;
	else
		head = t;
	tail = t;
	pthread_mutex_unlock(&lock);
	return -1;
}

/* The bug: a peek where a pop was meant (head is never advanced). */
static th_task *twice_pop(int worker)
{
	(void)worker;
	pthread_mutex_lock(&lock);
	th_task *t = head;
	pthread_mutex_unlock(&lock);
	return t;
}

const struct th_policy_ops th_policy_plugin = {
	.abi_version = TH_POLICY_ABI_VERSION,
	.name = "pop_twice",
	.description = "wrong on purpose: hands the same task out again",
	.push = twice_push,
	.pop = twice_pop,
};
