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
	(void)lp;
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

// optsched_attach allocates a control block with a deadline budget_ns
// from now (negative: none), installs the abort callback, and, when
// capture is set, routes lp_solve's report lines into the block instead
// of stdout. It returns NULL when out of memory.
static optsched_ctl *optsched_attach(lprec *lp, int64_t budget_ns, int capture) {
	optsched_ctl *c = (optsched_ctl *)calloc(1, sizeof *c);
	if (c == NULL)
		return NULL;
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
	free(c->log);
	free(c);
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
// from now (negative: none) and, when capture is set, the log capture.
func attach(lp *C.lprec, budgetNS int64, capture bool) (*ctl, error) {
	cp := 0
	if capture {
		cp = 1
	}
	c := C.optsched_attach(lp, C.int64_t(budgetNS), C.int(cp))
	if c == nil {
		return nil, errors.New("lpsolve: out of memory")
	}
	return &ctl{lp: lp, c: c}, nil
}

// cancel makes the abort callback return TRUE from now on. Safe to call
// from any goroutine until detach.
func (k *ctl) cancel() { C.optsched_cancel(k.c) }

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
