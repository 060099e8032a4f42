package main

// Protobuf encoding by hand for the requests this client sends and the responses it reads
// (field numbers from protos/ssh.proto and protos/shared.proto). gRPC carries the bytes as they
// are through bytesCodec.

import (
	"errors"
	"fmt"
)

type pbBuf []byte

func (b pbBuf) varint(v uint64) pbBuf {
	for v >= 0x80 {
		b = append(b, byte(v&0x7f|0x80))
		v >>= 7
	}
	return append(b, byte(v))
}

// str appends a length-delimited field; empty values are left out as proto3 does.
func (b pbBuf) str(num int, v []byte) pbBuf {
	if len(v) == 0 {
		return b
	}
	b = b.varint(uint64(num<<3 | 2)).varint(uint64(len(v)))
	return append(b, v...)
}

// msg appends an embedded message field, present even when empty.
func (b pbBuf) msg(num int, v []byte) pbBuf {
	b = b.varint(uint64(num<<3 | 2)).varint(uint64(len(v)))
	return append(b, v...)
}

type repo struct{ storage, relativePath string }

// gitaly.Repository: storage_name = 2, relative_path = 3.
func (r repo) encode() []byte {
	return pbBuf(nil).str(2, []byte(r.storage)).str(3, []byte(r.relativePath))
}

// SSHUploadPackWithSidechannelRequest: repository = 1, git_config_options = 2, git_protocol = 3.
func uploadPackWithSidechannelRequest(r repo, configOptions []string, gitProtocol string) []byte {
	b := pbBuf(nil).msg(1, r.encode())
	for _, o := range configOptions {
		b = b.str(2, []byte(o))
	}
	return b.str(3, []byte(gitProtocol))
}

// SSHReceivePackRequest: repository = 1, stdin = 2, gl_id = 3, gl_repository = 4, gl_username = 5,
// git_protocol = 6, git_config_options = 7.
func receivePackFirstRequest(r repo, glID, glRepository, glUsername, gitProtocol string, configOptions []string) []byte {
	b := pbBuf(nil).msg(1, r.encode()).
		str(3, []byte(glID)).str(4, []byte(glRepository)).str(5, []byte(glUsername)).
		str(6, []byte(gitProtocol))
	for _, o := range configOptions {
		b = b.str(7, []byte(o))
	}
	return b
}

// SSHUploadArchiveRequest: repository = 1, stdin = 2.
func uploadArchiveFirstRequest(r repo) []byte { return pbBuf(nil).msg(1, r.encode()) }

// Later requests of both bidi RPCs carry only stdin (field 2).
func stdinRequest(p []byte) []byte { return pbBuf(nil).str(2, p) }

// streamResponse is SSHReceivePackResponse / SSHUploadArchiveResponse:
// stdout = 1, stderr = 2, exit_status = 3 (ExitStatus: value = 1).
type streamResponse struct {
	stdout, stderr []byte
	hasExitStatus  bool
	exitStatus     int32
}

func uvarint(b []byte) (uint64, []byte, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		if i >= len(b) {
			break
		}
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, b[i+1:], nil
		}
	}
	return 0, nil, errors.New("bad varint")
}

// eachField calls fn for every field; fixed-width fields are skipped.
func eachField(b []byte, fn func(num int, wire int, v uint64, data []byte)) error {
	for len(b) > 0 {
		key, rest, err := uvarint(b)
		if err != nil {
			return err
		}
		b = rest
		num, wire := int(key>>3), int(key&7)
		switch wire {
		case 0:
			v, rest, err := uvarint(b)
			if err != nil {
				return err
			}
			b = rest
			fn(num, wire, v, nil)
		case 2:
			l, rest, err := uvarint(b)
			if err != nil {
				return err
			}
			if uint64(len(rest)) < l {
				return fmt.Errorf("field %d overruns the message", num)
			}
			fn(num, wire, 0, rest[:l])
			b = rest[l:]
		case 1:
			if len(b) < 8 {
				return errors.New("short fixed64")
			}
			b = b[8:]
		case 5:
			if len(b) < 4 {
				return errors.New("short fixed32")
			}
			b = b[4:]
		default:
			return fmt.Errorf("wire type %d", wire)
		}
	}
	return nil
}

func decodeStreamResponse(b []byte) (*streamResponse, error) {
	r := &streamResponse{}
	var inner error
	err := eachField(b, func(num, wire int, _ uint64, data []byte) {
		if wire != 2 {
			return
		}
		switch num {
		case 1:
			r.stdout = append(r.stdout, data...)
		case 2:
			r.stderr = append(r.stderr, data...)
		case 3:
			r.hasExitStatus = true
			inner = eachField(data, func(num, wire int, v uint64, _ []byte) {
				if num == 1 && wire == 0 {
					r.exitStatus = int32(v)
				}
			})
		}
	})
	if err == nil {
		err = inner
	}
	return r, err
}

// frame is one gRPC message as bytes.
type frame struct{ b []byte }

// bytesCodec passes frames through unchanged (encoding.Codec, used with grpc.ForceCodec).
// In grpc-go 1.33 ForceCodec does not change the content-type, which stays application/grpc.
type bytesCodec struct{}

func (bytesCodec) Marshal(v interface{}) ([]byte, error) {
	if f, ok := v.(*frame); ok {
		return f.b, nil
	}
	return nil, fmt.Errorf("bytesCodec: unexpected %T", v)
}

func (bytesCodec) Unmarshal(data []byte, v interface{}) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("bytesCodec: unexpected %T", v)
	}
	f.b = append(f.b[:0], data...)
	return nil
}

func (bytesCodec) Name() string { return "proto" }
