/* th_mpi_plugin.c — the only code that touches MPI: built with mpicc into libthdist_mpi.so,
 * loaded by user/dist/mpi.c when a run asks for --mpi. One frame = one MPI message. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../dist_int.h"

#define TAG 7411
#define MAX_PENDING 16

/* A worker's result pieces go out with MPI_Isend so it keeps computing while
 * the driver (polling, see mpi.c) picks them up; at most MAX_PENDING wait. */
static MPI_Request pend_req[MAX_PENDING];
static void *pend_buf[MAX_PENDING];
static int npend;

static void errtext(int rc, char *err, size_t errlen)
{
	char s[MPI_MAX_ERROR_STRING];
	int n = 0;
	if (MPI_Error_string(rc, s, &n) != MPI_SUCCESS)
		snprintf(s, sizeof s, "MPI error %d", rc);
	snprintf(err, errlen, "%s", s);
}

static int p_init(int *rank, int *size, char *err, size_t errlen)
{
	int inited = 0;
	MPI_Initialized(&inited);
	if (!inited) {
		/* CMA single-copy (process_vm_readv) is refused in many containers
		 * (ptrace restrictions); plain shared-memory copies always work. The
		 * user's own setting wins. */
		setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
		int rc = MPI_Init(NULL, NULL);
		if (rc != MPI_SUCCESS) {
			errtext(rc, err, errlen);
			return -1;
		}
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return 0;
}

static int p_send(int dest, const void *buf, size_t len)
{
	if (len > (size_t)INT32_MAX)
		return -1;
	return MPI_Send(buf, (int)len, MPI_BYTE, dest, TAG, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

static void reap_done(void)
{
	for (int i = 0; i < npend;) {
		int flag = 0;
		MPI_Test(&pend_req[i], &flag, MPI_STATUS_IGNORE);
		if (!flag) {
			i++;
			continue;
		}
		free(pend_buf[i]);
		npend--;
		pend_req[i] = pend_req[npend];
		pend_buf[i] = pend_buf[npend];
	}
}

static int p_isend(int dest, void *buf, size_t len)
{
	if (len > (size_t)INT32_MAX) {
		free(buf);
		return -1;
	}
	reap_done();
	if (npend == MAX_PENDING) {
		int idx;
		if (MPI_Waitany(npend, pend_req, &idx, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
			free(buf);
			return -1;
		}
		free(pend_buf[idx]);
		npend--;
		pend_req[idx] = pend_req[npend];
		pend_buf[idx] = pend_buf[npend];
	}
	if (MPI_Isend(buf, (int)len, MPI_BYTE, dest, TAG, MPI_COMM_WORLD, &pend_req[npend]) != MPI_SUCCESS) {
		free(buf);
		return -1;
	}
	pend_buf[npend++] = buf;
	return 0;
}

static int p_flush(void)
{
	int rc = npend ? MPI_Waitall(npend, pend_req, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
	for (int i = 0; i < npend; i++)
		free(pend_buf[i]);
	npend = 0;
	return rc == MPI_SUCCESS ? 0 : -1;
}

static int p_poll(int src, int *from, size_t *len)
{
	int flag = 0, count = 0;
	MPI_Status st;
	if (npend)
		reap_done();
	if (MPI_Iprobe(src < 0 ? MPI_ANY_SOURCE : src, TAG, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
		return -1;
	if (!flag)
		return 0;
	if (MPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS || count < 0)
		return -1;
	*from = st.MPI_SOURCE;
	*len = (size_t)count;
	return 1;
}

static int p_recv(int from, void *buf, size_t len)
{
	return MPI_Recv(buf, (int)len, MPI_BYTE, from, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS
		       ? 0
		       : -1;
}

static void p_finalize(void)
{
	int fin = 0;
	p_flush();
	MPI_Finalized(&fin);
	if (!fin)
		MPI_Finalize();
}

static const char *p_library(void)
{
	static char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int n = 0;
	if (!v[0])
		MPI_Get_library_version(v, &n);
	return v;
}

static const struct th_mpi_ops plugin_ops = {
	.abi = TH_MPI_PLUGIN_ABI,
	.init = p_init,
	.send = p_send,
	.isend = p_isend,
	.flush = p_flush,
	.poll = p_poll,
	.recv = p_recv,
	.finalize = p_finalize,
	.library = p_library,
};

__attribute__((visibility("default"))) const struct th_mpi_ops *th_mpi_plugin_ops(void)
{
	return &plugin_ops;
}
