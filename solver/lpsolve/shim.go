//go:build cgo

package lpsolve

// The shim: the few lp_solve calls golp does not bind, made on golp's own
// model. See the package documentation for why each one is needed.
//
// Everything the C side keeps between calls lives in C memory (a malloc'd
// control block), so no Go pointer is ever stored by C, and the abort and
// log callbacks are plain C functions: lp_solve never calls into Go.
//
// The include path and the library come from CGO_CFLAGS and CGO_LDFLAGS,
// as for golp itself (the Makefile exports them); golp already links
// liblpsolve55.

/*
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lp_lib.h"

// A control block: the deadline and cancellation flag the abort callback
// reads, and the buffer the log callback fills.
typedef struct {
	int64_t deadline_ns;  // CLOCK_MONOTONIC; INT64_MAX: none
	int     cancelled;    // set from Go through optsched_cancel (atomic)
	int     fired;        // the abort callback has returned TRUE
	char   *log;          // lp_solve's log when capturing, NUL-terminated
	size_t  loglen, logcap;
	int     logtrunc;     // the log hit OPTSCHED_LOG_MAX and was cut
	// Incumbents, when published: the message callback marks an improved
	// solution pending (lp_solve calls it just before it copies the
	// solution into best_solution); the abort callback, at lp_solve's next
	// iteration, copies best_solution's columns into inc under mu and
	// bumps version, which Go reads with optsched_incumbent.
	int      pending;     // lp_solve's thread only
	double  *inc;         // ncols values; NULL: not publishing
	int      ncols;
	uint64_t version;     // incumbents copied so far
	pthread_mutex_t mu;
} optsched_ctl;

#define OPTSCHED_LOG_MAX (4u << 20)

static int64_t optsched_now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
}

// Called by lp_solve at every simplex iteration and B&B node
// (userabort → yieldformessages). Sticky: once it returns TRUE it keeps
// doing so, as the deadline stays passed and the flag stays set.
static int __WINAPI optsched_abort(lprec *lp, void *handle) {
	optsched_ctl *c = (optsched_ctl *)handle;
	if (c->pending) {
		REAL *x = NULL;
		int n = get_Ncolumns(lp);
		c->pending = 0;
		if (n > c->ncols)
			n = c->ncols;
		if (get_ptr_variables(lp, &x) && x != NULL) {
			pthread_mutex_lock(&c->mu);
			memcpy(c->inc, x, (size_t)n * sizeof *x);
			c->version++;
			pthread_mutex_unlock(&c->mu);
		}
	}
	if (__atomic_load_n(&c->cancelled, __ATOMIC_ACQUIRE) || optsched_now_ns() >= c->deadline_ns) {
		__atomic_store_n(&c->fired, 1, __ATOMIC_RELEASE);
		return TRUE;
	}
	return FALSE;
}

static void __WINAPI optsched_log(lprec *lp, void *handle, char *buf) {
	optsched_ctl *c = (optsched_ctl *)handle;
	size_t n;
	(void)lp;
	if (buf == NULL || c->logtrunc)
		return;
	n = strlen(buf);
	if (c->loglen + n + 1 > OPTSCHED_LOG_MAX) {
		c->logtrunc = 1;
		return;
	}
	if (c->loglen + n + 1 > c->logcap) {
		size_t cap = c->logcap ? c->logcap : 4096;
		char *p;
		while (cap < c->loglen + n + 1)
			cap *= 2;
		p = (char *)realloc(c->log, cap);
		if (p == NULL) {
			c->logtrunc = 1;
			return;
		}
		c->log = p;
		c->logcap = cap;
	}
	memcpy(c->log + c->loglen, buf, n + 1);
	c->loglen += n;
}

static void __WINAPI optsched_msg(lprec *lp, void *handle, int msg) {
	(void)lp;
	if (msg == MSG_MILPFEASIBLE || msg == MSG_MILPBETTER)
		((optsched_ctl *)handle)->pending = 1;
}

// optsched_attach allocates a control block with a deadline budget_ns
// from now (negative: none), installs the abort callback, when capture
// is set routes lp_solve's report lines into the block instead of
// stdout, and when ncols > 0 keeps lp_solve's incumbents (of ncols
// columns) for optsched_incumbent. It returns NULL when out of memory.
static optsched_ctl *optsched_attach(lprec *lp, int64_t budget_ns, int capture, int ncols) {
	optsched_ctl *c = (optsched_ctl *)calloc(1, sizeof *c);
	if (c == NULL)
		return NULL;
	pthread_mutex_init(&c->mu, NULL);
	if (ncols > 0) {
		c->inc = (double *)calloc((size_t)ncols, sizeof *c->inc);
		if (c->inc == NULL) {
			free(c);
			return NULL;
		}
		c->ncols = ncols;
		put_msgfunc(lp, optsched_msg, c, MSG_MILPFEASIBLE | MSG_MILPBETTER);
	}
	c->deadline_ns = budget_ns < 0 ? INT64_MAX : optsched_now_ns() + budget_ns;
	put_abortfunc(lp, optsched_abort, c);
	// "" discards lp_solve's own printing (print_* and report lines);
	// report lines still reach the log callback.
	set_outputfile(lp, "");
	if (capture)
		put_logfunc(lp, optsched_log, c);
	return c;
}

// optsched_detach removes the callbacks from lp and frees c.
static void optsched_detach(lprec *lp, optsched_ctl *c) {
	put_abortfunc(lp, NULL, NULL);
	put_logfunc(lp, NULL, NULL);
	put_msgfunc(lp, NULL, NULL, 0);
	pthread_mutex_destroy(&c->mu);
	free(c->inc);
	free(c->log);
	free(c);
}

// optsched_incumbent copies the last incumbent kept into dst (n values)
// when its version is not seen, and returns its version (0: none yet).
static uint64_t optsched_incumbent(optsched_ctl *c, double *dst, int n, uint64_t seen) {
	uint64_t v;
	pthread_mutex_lock(&c->mu);
	v = c->version;
	if (v != seen && c->inc != NULL)
		memcpy(dst, c->inc, (size_t)(n < c->ncols ? n : c->ncols) * sizeof *dst);
	pthread_mutex_unlock(&c->mu);
	return v;
}

static void optsched_cancel(optsched_ctl *c) {
	__atomic_store_n(&c->cancelled, 1, __ATOMIC_RELEASE);
}

static int optsched_fired(optsched_ctl *c) {
	return __atomic_load_n(&c->fired, __ATOMIC_ACQUIRE);
}

static void optsched_set_gaps(lprec *lp, double absolute, double relative) {
	set_mip_gap(lp, TRUE, absolute);
	set_mip_gap(lp, FALSE, relative);
}

static double optsched_mip_gap(lprec *lp, int absolute) {
	return get_mip_gap(lp, absolute ? TRUE : FALSE);
}
*/
import "C"

import (
	"errors"
	"reflect"
	"unsafe"

	"github.com/draffensperger/golp"
)

// MIP gaps the shim sets on every model. lp_solve stops exploring a
// branch whose bound is within these gaps of the incumbent. lp_solve's
// documentation gives defaults of 1e-11 absolute and 1e-9 relative; the
// Debian 5.5.2.5 build has 1e-11 for both (TestMIPGaps prints them). The
// shim sets both to 1e-11 explicitly, so that OPTIMAL means optimal for
// SCAS's integer objectives whatever the build's defaults.
const (
	absMIPGap = 1e-11
	relMIPGap = 1e-11
)

// errLayout reports that golp.LP no longer has the layout lprecOf reads.
var errLayout = errors.New("lpsolve: golp.LP is not the struct{ptr *C.lprec} this package was written for; update the shim")

// lprecOf returns the lp_solve handle inside golp's *LP.
//
// golp keeps it in an unexported field, LP.ptr of type *C.lprec (golp's
// own cgo type, distinct from this package's C.lprec, which is why it is
// read as an unsafe.Pointer and converted). reflect reads the unexported
// pointer without unsafe arithmetic, and the layout is checked first so
// that a golp release that renames or retypes the field is an error, not
// a wild pointer. The caller must keep lp reachable (runtime.KeepAlive)
// for as long as it uses the handle: golp frees it in lp's finalizer.
func lprecOf(lp *golp.LP) (*C.lprec, error) {
	v := reflect.ValueOf(lp)
	if lp == nil || v.Elem().Kind() != reflect.Struct {
		return nil, errLayout
	}
	f, ok := v.Elem().Type().FieldByName("ptr")
	if !ok || f.Type.Kind() != reflect.Pointer || f.Type.Elem().Name() != "_Ctype_struct__lprec" {
		return nil, errLayout
	}
	p := v.Elem().FieldByIndex(f.Index).UnsafePointer()
	if p == nil {
		return nil, errors.New("lpsolve: lp_solve could not create a model (make_lp returned NULL)")
	}
	return (*C.lprec)(p), nil
}

// ctl is a C control block attached to one model for one solve.
type ctl struct {
	lp *C.lprec
	c  *C.optsched_ctl
}

// attach installs the abort callback with a deadline budgetNS nanoseconds
// from now (negative: none), when capture is set the log capture, and
// when ncols > 0 the keeping of incumbents (ctl.incumbent).
func attach(lp *C.lprec, budgetNS int64, capture bool, ncols int) (*ctl, error) {
	cp := 0
	if capture {
		cp = 1
	}
	c := C.optsched_attach(lp, C.int64_t(budgetNS), C.int(cp), C.int(ncols))
	if c == nil {
		return nil, errors.New("lpsolve: out of memory")
	}
	return &ctl{lp: lp, c: c}, nil
}

// cancel makes the abort callback return TRUE from now on. Safe to call
// from any goroutine until detach.
func (k *ctl) cancel() { C.optsched_cancel(k.c) }

// incumbent copies into x the last incumbent lp_solve found, when its
// version is not seen, and returns its version (0: none yet). Safe to
// call from any goroutine until detach, while lp_solve runs.
func (k *ctl) incumbent(x []float64, seen uint64) uint64 {
	if len(x) == 0 {
		return 0
	}
	return uint64(C.optsched_incumbent(k.c, (*C.double)(unsafe.Pointer(&x[0])), C.int(len(x)), C.uint64_t(seen)))
}

// fired reports whether the abort callback has asked lp_solve to stop.
func (k *ctl) fired() bool { return C.optsched_fired(k.c) != 0 }

// log returns the captured log and whether it was cut short.
func (k *ctl) log() ([]byte, bool) {
	var b []byte
	if k.c.log != nil {
		b = C.GoBytes(unsafe.Pointer(k.c.log), C.int(k.c.loglen))
	}
	return b, k.c.logtrunc != 0
}

// detach removes the callbacks and frees the control block.
func (k *ctl) detach() {
	C.optsched_detach(k.lp, k.c)
	k.c = nil
}

// setGaps sets lp_solve's absolute and relative MIP gaps.
func setGaps(lp *C.lprec, absolute, relative float64) {
	C.optsched_set_gaps(lp, C.double(absolute), C.double(relative))
}

// mipGaps returns lp_solve's absolute and relative MIP gaps.
func mipGaps(lp *C.lprec) (absolute, relative float64) {
	return float64(C.optsched_mip_gap(lp, 1)), float64(C.optsched_mip_gap(lp, 0))
}

// counters returns lp_solve's simplex iteration and B&B node counts of the
// last solve.
func counters(lp *C.lprec) (iterations, nodes int64) {
	return int64(C.get_total_iter(lp)), int64(C.get_total_nodes(lp))
}
