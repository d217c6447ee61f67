package nsa

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"

	"github.com/optsched/optsched/heuristics/learn"
)

// The weights file (gzip-compressed; an uncompressed file is read too) is,
// little-endian:
//
//	magic   "NSAWGT01" (8 bytes)
//	arch    uint32  (0 cnn3, 1 cnn2, 2 cnn1, 3 fcn1, 4 fcn2, 5 fcn3)
//	beta    uint32  (4, or 5 with the idle channel)
//	q       uint32  (positions)
//	out     uint32  (outputs: q for an actor, 1 for a critic)
//	nmax    uint32  (the size normaliser n_max)
//	flags   uint32  (bit 0: relative leaf and pod ids; other bits 0)
//	count   uint32  (number of parameters that follow)
//	params  count × float32, layer by layer (weights then biases; a
//	        Linear's weights out×in row-major, a Conv1d's cout×cin×k)
//	crc     uint32  (CRC-32/IEEE of every byte before it)
//
// and nothing after.
const weightsMagic = "NSAWGT01"

// Limits of the weights reader, so a corrupt header cannot ask for
// gigabytes.
const (
	maxFileQ    = 1024
	maxFileNMax = 1 << 20
	// maxFileParams bounds the parameters of a file (the shipped CNN-3
	// has about 117,000).
	maxFileParams = 4 << 20
)

// ErrWeights is wrapped by every error ReadPolicy returns for a bad file.
var ErrWeights = errors.New("nsa: bad weights file")

// WritePolicy writes p's network in the weights format, gzip-compressed.
// The parameters are stored as float32, so a policy read back computes
// with its weights rounded to float32 (see RoundWeights).
func WritePolicy(w io.Writer, p *Policy) error {
	n := p.Net
	flags := 0
	if p.Relative {
		flags |= 1
	}
	var header []uint32
	for _, v := range []int{int(n.Arch), n.Beta, n.Q, n.Out, p.NMax, flags} {
		header = append(header, uint32(v))
	}
	return learn.WriteWeights(w, weightsMagic, header, n.Params())
}

// RoundWeights rounds p's parameters to float32 precision in place, as
// WritePolicy stores them.
func RoundWeights(n *Net) {
	for _, par := range n.Params() {
		for i, v := range par.W {
			par.W[i] = float64(float32(v))
		}
	}
}

// ReadPolicy reads a weights file (gzip-compressed or not). Every field is
// checked: an unknown architecture, β other than 4 or 5, q or n_max out of
// range, unknown flags, outputs other than q or 1, a parameter count that does not match
// the architecture, a non-finite weight, a checksum mismatch or trailing
// bytes are errors wrapping ErrWeights, naming the field.
func ReadPolicy(r io.Reader) (*Policy, error) {
	br := bufio.NewReader(r)
	var src io.Reader = br
	if head, err := br.Peek(2); err == nil && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", ErrWeights, err)
		}
		zr.Multistream(false)
		src = zr
	}
	crc := crc32.NewIEEE()
	tee := io.TeeReader(src, crc)
	var magic [8]byte
	if _, err := io.ReadFull(tee, magic[:]); err != nil {
		return nil, fmt.Errorf("%w: magic: %v", ErrWeights, shortRead(err))
	}
	if string(magic[:]) != weightsMagic {
		return nil, fmt.Errorf("%w: magic: want %q, got %q", ErrWeights, weightsMagic, magic[:])
	}
	var hdr [7]uint32
	if err := binary.Read(tee, binary.LittleEndian, &hdr); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrWeights, shortRead(err))
	}
	arch, b, q, out, nmax, flags, count := hdr[0], hdr[1], hdr[2], hdr[3], hdr[4], hdr[5], hdr[6]
	switch {
	case arch >= uint32(numArch):
		return nil, fmt.Errorf("%w: arch: unknown architecture %d", ErrWeights, arch)
	case b != 4 && b != 5:
		return nil, fmt.Errorf("%w: beta: must be 4 or 5, got %d", ErrWeights, b)
	case q < 1 || q > maxFileQ:
		return nil, fmt.Errorf("%w: q: must be between 1 and %d, got %d", ErrWeights, maxFileQ, q)
	case out != q && out != 1:
		return nil, fmt.Errorf("%w: out: must be q (%d, an actor) or 1 (a critic), got %d", ErrWeights, q, out)
	case nmax < 1 || nmax > maxFileNMax:
		return nil, fmt.Errorf("%w: nmax: must be between 1 and %d, got %d", ErrWeights, maxFileNMax, nmax)
	case flags&^1 != 0:
		return nil, fmt.Errorf("%w: flags: unknown bits %#x", ErrWeights, flags&^1)
	}
	want, err := numParams(Arch(arch), int(b), int(q), int(out))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWeights, err)
	}
	if int64(count) != int64(want) {
		return nil, fmt.Errorf("%w: count: %s with β=%d, q=%d, out=%d has %d parameters, the file says %d",
			ErrWeights, Arch(arch), b, q, out, want, count)
	}
	if count > maxFileParams {
		return nil, fmt.Errorf("%w: count: %d parameters, more than the %d this reader accepts", ErrWeights, count, maxFileParams)
	}
	net, err := NewNet(Arch(arch), int(b), int(q), int(out), 1, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWeights, err)
	}
	var b4 [4]byte
	for _, par := range net.Params() {
		for i := range par.W {
			if _, err := io.ReadFull(tee, b4[:]); err != nil {
				return nil, fmt.Errorf("%w: params: %s: %v", ErrWeights, par.Name, shortRead(err))
			}
			v := float64(math.Float32frombits(binary.LittleEndian.Uint32(b4[:])))
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: params: %s[%d] is not finite", ErrWeights, par.Name, i)
			}
			par.W[i] = v
		}
	}
	sum := crc.Sum32()
	if _, err := io.ReadFull(src, b4[:]); err != nil {
		return nil, fmt.Errorf("%w: crc: %v", ErrWeights, shortRead(err))
	}
	if got := binary.LittleEndian.Uint32(b4[:]); got != sum {
		return nil, fmt.Errorf("%w: crc: stored %08x, computed %08x", ErrWeights, got, sum)
	}
	switch n, err := io.ReadFull(src, b4[:1]); {
	case n != 0:
		return nil, fmt.Errorf("%w: trailing bytes after the checksum", ErrWeights)
	case err != nil && !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("%w: after the checksum: %v", ErrWeights, err)
	}
	return &Policy{Net: net, Idle: b == 5, NMax: int(nmax), Relative: flags&1 != 0}, nil
}

func shortRead(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("file ends early")
	}
	return err
}
