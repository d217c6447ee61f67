package learn

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// ErrWeights is wrapped by every error ReadWeights returns for a bad file.
var ErrWeights = errors.New("learn: bad weights file")

// ErrMagic is wrapped too (besides ErrWeights) when a file's magic is not
// the one asked for: a reader of several formats tries the next.
var ErrMagic = errors.New("another magic")

// MaxFileParams bounds the parameters of a weights file ReadWeights
// accepts, so that a corrupt header cannot ask for gigabytes.
const MaxFileParams = 4 << 20

// WriteWeights writes a weights file, gzip-compressed: magic (8 bytes),
// the header's uint32 values, the number of parameters (uint32), every
// parameter as a little-endian float32 in the order of params, and the
// CRC-32/IEEE of every byte before it. A design's header says what
// network the parameters belong to.
func WriteWeights(w io.Writer, magic string, header []uint32, params []*Param) error {
	if len(magic) != 8 {
		return fmt.Errorf("learn: magic must be 8 bytes, got %q", magic)
	}
	var buf bytes.Buffer
	buf.WriteString(magic)
	count := 0
	for _, p := range params {
		count += len(p.W)
	}
	var b4 [4]byte
	for _, v := range append(append([]uint32(nil), header...), uint32(count)) {
		binary.LittleEndian.PutUint32(b4[:], v)
		buf.Write(b4[:])
	}
	for _, p := range params {
		for _, v := range p.W {
			binary.LittleEndian.PutUint32(b4[:], math.Float32bits(float32(v)))
			buf.Write(b4[:])
		}
	}
	binary.LittleEndian.PutUint32(b4[:], crc32.ChecksumIEEE(buf.Bytes()))
	buf.Write(b4[:])
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(buf.Bytes()); err != nil {
		return err
	}
	return zw.Close()
}

// ReadWeights reads a file WriteWeights wrote (gzip-compressed or not)
// with nHeader header values: build receives the header and returns the
// parameters to fill (an error for a header it does not accept). A wrong
// magic, a parameter count other than build's, a non-finite value, a
// checksum mismatch or trailing bytes are errors wrapping ErrWeights.
func ReadWeights(r io.Reader, magic string, nHeader int, build func(header []uint32) ([]*Param, error)) error {
	br := bufio.NewReader(r)
	var src io.Reader = br
	if head, err := br.Peek(2); err == nil && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%w: gzip: %v", ErrWeights, err)
		}
		zr.Multistream(false)
		src = zr
	}
	crc := crc32.NewIEEE()
	tee := io.TeeReader(src, crc)
	got := make([]byte, len(magic))
	if _, err := io.ReadFull(tee, got); err != nil {
		return fmt.Errorf("%w: magic: %v", ErrWeights, short(err))
	}
	if string(got) != magic {
		return fmt.Errorf("%w: magic: want %q, got %q (%w)", ErrWeights, magic, got, ErrMagic)
	}
	hdr := make([]uint32, nHeader+1)
	if err := binary.Read(tee, binary.LittleEndian, hdr); err != nil {
		return fmt.Errorf("%w: header: %v", ErrWeights, short(err))
	}
	params, err := build(hdr[:nHeader])
	if err != nil {
		return fmt.Errorf("%w: %v", ErrWeights, err)
	}
	want := 0
	for _, p := range params {
		want += len(p.W)
	}
	if count := hdr[nHeader]; int64(count) != int64(want) || want > MaxFileParams {
		return fmt.Errorf("%w: count: the header's network has %d parameters, the file says %d", ErrWeights, want, count)
	}
	var b4 [4]byte
	for _, p := range params {
		for i := range p.W {
			if _, err := io.ReadFull(tee, b4[:]); err != nil {
				return fmt.Errorf("%w: params: %s: %v", ErrWeights, p.Name, short(err))
			}
			v := float64(math.Float32frombits(binary.LittleEndian.Uint32(b4[:])))
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: params: %s[%d] is not finite", ErrWeights, p.Name, i)
			}
			p.W[i] = v
		}
	}
	sum := crc.Sum32()
	if _, err := io.ReadFull(src, b4[:]); err != nil {
		return fmt.Errorf("%w: crc: %v", ErrWeights, short(err))
	}
	if got := binary.LittleEndian.Uint32(b4[:]); got != sum {
		return fmt.Errorf("%w: crc: stored %08x, computed %08x", ErrWeights, got, sum)
	}
	switch n, err := io.ReadFull(src, b4[:1]); {
	case n != 0:
		return fmt.Errorf("%w: trailing bytes after the checksum", ErrWeights)
	case err != nil && !errors.Is(err, io.EOF):
		return fmt.Errorf("%w: after the checksum: %v", ErrWeights, err)
	}
	return nil
}

func short(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("file ends early")
	}
	return err
}

// RoundWeights rounds params to float32 precision in place, as
// WriteWeights stores them.
func RoundWeights(params []*Param) {
	for _, p := range params {
		for i, v := range p.W {
			p.W[i] = float64(float32(v))
		}
	}
}
