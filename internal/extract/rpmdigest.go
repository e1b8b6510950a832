package extract

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
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
func readPayloadDigest(tags *rpmTags) (*payloadDigest, error) {
	digest, err := tags.firstString(rpmTagPayloadDigest, false)
	if err != nil || digest == "" {
		return nil, err
	}
	algo, ok, err := tags.firstUint32(rpmTagPayloadDigestAlgo)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("rpm header: payload digest without its algorithm (tag %d)", rpmTagPayloadDigestAlgo)
	}
	newHash, ok := rpmHashes[algo]
	if !ok {
		return nil, fmt.Errorf("rpm header: payload digest algorithm %d, none this reader checks", algo)
	}
	d := &payloadDigest{algo: algo, h: newHash()}
	d.want, err = hex.DecodeString(digest)
	if err != nil || len(d.want) != d.h.Size() {
		return nil, fmt.Errorf("rpm header: payload digest %.80q is not a digest of algorithm %d", digest, algo)
	}
	return d, nil
}

// checkHeaderDigest compares the main header's bytes (intro, index and
// store) with the digest the signature header gives of them, SHA-256
// where it has one, SHA-1 otherwise, as rpm -K does: the payload digest
// is only as good as the header holding it. A signature header with
// neither leaves the header unchecked.
func checkHeaderDigest(sig *rpmTags, header []byte) error {
	for _, d := range []struct {
		tag  uint32
		name string
		sum  func([]byte) []byte
	}{
		{rpmSigTagSHA256, "SHA-256", func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }},
		{rpmSigTagSHA1, "SHA-1", func(b []byte) []byte { s := sha1.Sum(b); return s[:] }},
	} {
		want, err := sig.firstString(d.tag, true)
		if err != nil {
			return err
		}
		if want == "" {
			continue
		}
		if got := hex.EncodeToString(d.sum(header)); got != want {
			return fmt.Errorf("rpm header: %s mismatch: the signature header (tag %d) says %.80q, the header is %s", d.name, d.tag, want, got)
		}
		return nil
	}
	return nil
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
	long, err := drainTail(d.writer(), rest)
	if err != nil {
		return err
	}
	if long {
		return fmt.Errorf("more than %d KiB after the compressed payload", maxAfterArchive>>10)
	}
	if d == nil {
		return nil
	}
	if got := d.h.Sum(nil); !bytes.Equal(got, d.want) {
		return fmt.Errorf("payload digest (algorithm %d, tag %d) mismatch: the header says %x, the payload is %x",
			d.algo, rpmTagPayloadDigest, d.want, got)
	}
	return nil
}

func (d *payloadDigest) writer() io.Writer {
	if d == nil {
		return io.Discard
	}
	return d.h
}
