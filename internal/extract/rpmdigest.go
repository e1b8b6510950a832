package extract

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"

	rpmutils "github.com/sassoftware/go-rpmutils"
)

// payloadDigest is the digest an RPM's main header gives of its payload
// as the file holds it, compressed: RPMTAG_PAYLOADDIGEST (5092, hex
// strings, the first one used, as rpm does) with the algorithm of
// RPMTAG_PAYLOADDIGESTALGO (5093). rpm writes it since 4.14, SHA-256.
type payloadDigest struct {
	algo uint32
	want []byte
	h    hash.Hash
}

// rpmHashes are the digest algorithms a payload digest may use, by their
// OpenPGP hash algorithm IDs (RFC 9580, 9.5), which rpm's tags use. MD5
// and SHA-1 are left out: no rpm writes payload digests with them.
var rpmHashes = map[uint32]func() hash.Hash{
	8:  sha256.New,
	9:  sha512.New384,
	10: sha512.New,
	11: sha256.New224,
	12: func() hash.Hash { return sha3.New256() },
	14: func() hash.Hash { return sha3.New512() },
}

// readPayloadDigest takes the payload digest of a main header, nil if it
// has none. A digest that cannot be checked (an unknown algorithm, not
// hex, the wrong length) is an error: a package is not taken as checked
// when it is not.
func readPayloadDigest(hdr *rpmutils.RpmHeader) (*payloadDigest, error) {
	digests, err := hdr.GetStrings(rpmutils.PAYLOADDIGEST)
	if err != nil || len(digests) == 0 {
		return nil, nil
	}
	algos, err := hdr.GetUint32s(rpmutils.PAYLOADDIGESTALGO)
	if err != nil || len(algos) == 0 {
		return nil, fmt.Errorf("rpm header: payload digest without its algorithm (tag %d)", rpmutils.PAYLOADDIGESTALGO)
	}
	newHash, ok := rpmHashes[algos[0]]
	if !ok {
		return nil, fmt.Errorf("rpm header: payload digest algorithm %d, none this reader checks", algos[0])
	}
	d := &payloadDigest{algo: algos[0], h: newHash()}
	d.want, err = hex.DecodeString(digests[0])
	if err != nil || len(d.want) != d.h.Size() {
		return nil, fmt.Errorf("rpm header: payload digest %.80q is not a digest of algorithm %d", digests[0], algos[0])
	}
	return d, nil
}

// reader returns r with what is read through it digested.
func (d *payloadDigest) reader(r io.Reader) io.Reader {
	if d == nil {
		return r
	}
	return io.TeeReader(r, d.h)
}

// verify digests the rest of the payload, whose decompressed stream has
// ended, at most maxAfterArchive bytes of it, and compares. A package
// without a digest still may not go on for more past its stream.
func (d *payloadDigest) verify(rest io.Reader) error {
	n, err := io.Copy(d.writer(), io.LimitReader(rest, maxAfterArchive+1))
	if err != nil {
		return err
	}
	if n > maxAfterArchive {
		return fmt.Errorf("more than %d KiB after the compressed payload", maxAfterArchive>>10)
	}
	if d == nil {
		return nil
	}
	if got := d.h.Sum(nil); !bytes.Equal(got, d.want) {
		return fmt.Errorf("payload digest (algorithm %d, tag %d) mismatch: the header says %x, the payload is %x",
			d.algo, rpmutils.PAYLOADDIGEST, d.want, got)
	}
	return nil
}

func (d *payloadDigest) writer() io.Writer {
	if d == nil {
		return io.Discard
	}
	return d.h
}
