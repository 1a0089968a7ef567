/* mpi.c — the MPI transport without linking MPI: it dlopens libthdist_mpi.so (built with
 * mpicc when OpenMPI is installed), so every other binary stays free of libmpi. */
#include "dist_int.h"

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct th_mpi_ops *ops;
static int world_size;
static bool dead[TH_DIST_MAX_PROCS + 1];

/* Polling with a short, growing sleep: OpenMPI's blocking receive spins a
 * whole core, which on a small machine is a core taken from the workers. */
static void backoff(unsigned *us)
{
	nanosleep(&(struct timespec){ 0, (long)*us * 1000 }, NULL);
	if (*us < 1000)
		*us *= 2;
}

/* Receives one message from `src` (-1: any) within timeout_ms (-1: forever).
 * 1 with *from and a malloc'd *buf, 0 on timeout, -1 on MPI error. */
static int recv_msg(int src, int timeout_ms, int *from, void **buf, size_t *len)
{
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : th_dist__now_ns() + (uint64_t)timeout_ms * 1000000u;
	unsigned us = 20;
	for (;;) {
		int r = ops->poll(src, from, len);
		if (r < 0)
			return -1;
		if (r > 0)
			break;
		if (th_dist__now_ns() >= deadline)
			return 0;
		backoff(&us);
	}
	*buf = malloc(*len ? *len : 1);
	if (!*buf)
		return -1;
	if (ops->recv(*from, *buf, *len) != 0) {
		free(*buf);
		return -1;
	}
	return 1;
}

/* ---- driver side --------------------------------------------------------------- */
static int mpi_send(int proc, const void *buf, size_t len)
{
	if (proc < 1 || proc >= world_size || dead[proc])
		return -1;
	return ops->send(proc, buf, len);
}

static int mpi_recv(int *proc, struct th_frame *f, int timeout_ms, char *err, size_t errlen)
{
	for (;;) {
		void *buf;
		size_t len;
		int r = recv_msg(-1, timeout_ms, proc, &buf, &len);
		if (r == 0)
			return TH_EV_TIMEOUT;
		if (r < 0) {
			snprintf(err, errlen, "MPI receive failed");
			return TH_EV_FAIL;
		}
		if (*proc < 1 || *proc > TH_DIST_MAX_PROCS || dead[*proc]) {
			free(buf); /* a rank the driver gave up on keeps talking: ignore it */
			continue;
		}
		char why[256];
		int bad = th_frame_parse(buf, len, f, why, sizeof why);
		free(buf);
		if (!bad)
			return TH_EV_FRAME;
		snprintf(err, errlen, "sent a bad frame (%s)", why);
		return TH_EV_GONE;
	}
}

/* An MPI rank cannot be killed or waited for from here: mpirun owns it (and
 * ends the whole job if one dies). The driver just stops listening to it. */
static void mpi_reap(int proc, bool kill_it, int grace_ms, int *status, long *maxrss_kb,
		     uint64_t *utime_us, uint64_t *stime_us)
{
	(void)kill_it;
	(void)grace_ms;
	(void)maxrss_kb;
	(void)utime_us;
	(void)stime_us;
	*status = -1;
	if (proc >= 1 && proc <= TH_DIST_MAX_PROCS)
		dead[proc] = true;
}

static void mpi_finish(void)
{
	ops->finalize();
}

static const struct th_dist_transport mpi_transport = {
	.name = "mpi", .send = mpi_send, .recv = mpi_recv, .reap = mpi_reap, .finish = mpi_finish,
};

/* ---- worker side --------------------------------------------------------------- */
static int rank_send(const void *buf, size_t len)
{
	return ops->isend(0, (void *)buf, len); /* the plugin frees buf when sent */
}

static int rank_recv(struct th_frame *f, char *err, size_t errlen)
{
	void *buf;
	size_t len;
	int from;
	if (recv_msg(0, -1, &from, &buf, &len) <= 0) {
		snprintf(err, errlen, "MPI receive failed");
		return -1;
	}
	int bad = th_frame_parse(buf, len, f, err, errlen);
	free(buf);
	return bad ? -1 : 1;
}

static int rank_flush(void)
{
	return ops->flush();
}

static const struct th_worker_link rank_link = { rank_send, rank_recv, rank_flush };

/* ---- loading ------------------------------------------------------------------- */
#define PLUGIN "libthdist_mpi.so"

static void *load_plugin(char *tried, size_t tlen)
{
	const char *env = getenv("TASKHOP_MPI_PLUGIN");
	if (env && *env) {
		snprintf(tried, tlen, "%.900s", env);
		return dlopen(env, RTLD_NOW | RTLD_GLOBAL);
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	const char *dir = dirname(exe);
	/* next to the binary (build dir), one up (build/tests/), the install layout */
	const char *rel[] = { "", "../", "../lib/taskhop/" };
	tried[0] = 0;
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof path, "%s/%s" PLUGIN, dir, rel[i]);
		size_t used = strlen(tried);
		snprintf(tried + used, tlen - used, "%s%.900s", used ? ", " : "", path);
		if (access(path, R_OK) != 0)
			continue;
		/* RTLD_GLOBAL: OpenMPI's own components are dlopen'ed and look up
		 * libmpi's symbols globally */
		void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
		if (h)
			return h;
		snprintf(tried, tlen, "%.900s: %.900s", path, dlerror());
		return NULL;
	}
	return NULL;
}

/* The driver refuses the world it got: it still tells every worker rank to
 * stop, or they would wait for calls forever and mpirun would never return. */
static void refuse_world(int size)
{
	for (int r = 1; r < size; r++) {
		size_t len;
		void *stop = th_frame_build(TH_FR_STOP, 0, NULL, NULL, 0, &len);
		if (stop)
			ops->send(r, stop, len);
		free(stop);
	}
	ops->finalize();
}

/* mpirun (OpenMPI, MPICH, Slurm's PMI) leaves one of these in every rank. */
static bool under_mpi_launcher(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK") ||
	       getenv("PMI_SIZE");
}

int th_dist__mpi_start(const struct th_procs_config *cfg, int *nworkers,
		       const struct th_dist_transport **tr)
{
	if (!under_mpi_launcher()) {
		th_dist__set_error("--mpi needs mpirun: run e.g. `mpirun -n 3 taskhop run leibniz --mpi` "
				   "(rank 0 drives, the other ranks are the workers)");
		return -1;
	}
	if (!ops) {
		char tried[2048] = "";
		void *h = load_plugin(tried, sizeof tried);
		th_mpi_plugin_fn get = h ? (th_mpi_plugin_fn)dlsym(h, TH_MPI_PLUGIN_SYMBOL) : NULL;
		if (!get) {
			th_dist__set_error("the MPI transport plugin " PLUGIN " is not usable (tried %s); "
					   "build it with `make` where mpicc exists (`make deps` installs OpenMPI) "
					   "or set TASKHOP_MPI_PLUGIN", tried[0] ? tried : "nothing");
			return -1;
		}
		const struct th_mpi_ops *o = get();
		if (!o || o->abi != TH_MPI_PLUGIN_ABI) {
			th_dist__set_error(PLUGIN " speaks plugin ABI %d, this binary %d: rebuild it",
					   o ? o->abi : -1, TH_MPI_PLUGIN_ABI);
			return -1;
		}
		ops = o;
	}
	int rank, size;
	char err[256] = "";
	if (ops->init(&rank, &size, err, sizeof err) != 0) {
		th_dist__set_error("MPI_Init failed: %s", err);
		return -1;
	}
	if (rank != 0) {
		/* a worker rank: serve until the driver says stop, then leave */
		int status = th_dist__worker_main(&rank_link, cfg);
		ops->finalize();
		fflush(NULL);
		exit(status);
	}
	if (size < 2 || size - 1 > TH_DIST_MAX_PROCS) {
		refuse_world(size);
		th_dist__set_error("the MPI world has %d rank%s: run with mpirun -n N, N = 2..%d "
				   "(rank 0 drives, ranks 1..N-1 work)", size, size == 1 ? "" : "s",
				   TH_DIST_MAX_PROCS + 1);
		return -1;
	}
	if (cfg->procs > 0 && cfg->procs != size - 1) {
		refuse_world(size);
		th_dist__set_error("--procs %d does not match the MPI world: mpirun -n %d gives %d worker%s",
				   cfg->procs, size, size - 1, size == 2 ? "" : "s");
		return -1;
	}
	world_size = size;
	memset(dead, 0, sizeof dead);
	*nworkers = size - 1;
	*tr = &mpi_transport;
	return 0;
}
