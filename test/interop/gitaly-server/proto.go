package main

// Hand-written protobuf wire encoding for the handful of Gitaly messages this server reads and
// writes. There is no protoc-gen-go in the offline toolchain, so messages travel through gRPC as
// raw bytes (rawCodec) and are taken apart field by field here.

import (
	"errors"
	"fmt"
)

// Wire types (protobuf encoding spec).
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// field is one decoded protobuf field: a varint value or a length-delimited payload.
type field struct {
	num    int
	wire   int
	varint uint64
	bytes  []byte
}

func readVarint(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * uint(i))
		if b[i] < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("protobuf: truncated or overlong varint")
}

// decodeFields splits a message into its fields, in wire order. Fixed-width fields are skipped.
func decodeFields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		key, n, err := readVarint(b)
		if err != nil {
			return nil, err
		}
		b = b[n:]
		f := field{num: int(key >> 3), wire: int(key & 7)}
		if f.num == 0 {
			return nil, errors.New("protobuf: field number 0")
		}
		switch f.wire {
		case wireVarint:
			if f.varint, n, err = readVarint(b); err != nil {
				return nil, err
			}
			b = b[n:]
		case wireBytes:
			l, n, err := readVarint(b)
			if err != nil {
				return nil, err
			}
			b = b[n:]
			if l > uint64(len(b)) {
				return nil, fmt.Errorf("protobuf: field %d: length %d beyond message end", f.num, l)
			}
			f.bytes = b[:l]
			b = b[l:]
		case wireFixed64:
			if len(b) < 8 {
				return nil, errors.New("protobuf: truncated fixed64")
			}
			b = b[8:]
			continue
		case wireFixed32:
			if len(b) < 4 {
				return nil, errors.New("protobuf: truncated fixed32")
			}
			b = b[4:]
			continue
		default:
			return nil, fmt.Errorf("protobuf: field %d: unsupported wire type %d", f.num, f.wire)
		}
		out = append(out, f)
	}
	return out, nil
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendBytesField appends a length-delimited field (bytes, string or embedded message).
func appendBytesField(b []byte, num int, v []byte) []byte {
	b = appendVarint(b, uint64(num)<<3|wireBytes)
	b = appendVarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendVarintField(b []byte, num int, v uint64) []byte {
	b = appendVarint(b, uint64(num)<<3|wireVarint)
	return appendVarint(b, v)
}

// repository is gitaly.Repository (shared.proto): storage_name = 2, relative_path = 3.
type repository struct {
	storageName  string
	relativePath string
}

func decodeRepository(b []byte) (*repository, error) {
	fs, err := decodeFields(b)
	if err != nil {
		return nil, err
	}
	r := &repository{}
	for _, f := range fs {
		switch {
		case f.num == 2 && f.wire == wireBytes:
			r.storageName = string(f.bytes)
		case f.num == 3 && f.wire == wireBytes:
			r.relativePath = string(f.bytes)
		}
	}
	return r, nil
}

// sshRequest holds the fields of the three request messages this server handles
// (ssh.proto). The field numbers differ per message; see the decode functions.
type sshRequest struct {
	repository       *repository
	stdin            []byte
	hasStdin         bool
	glID             string
	glRepository     string
	glUsername       string
	gitProtocol      string
	gitConfigOptions []string
}

// decodeUploadPackWithSidechannelRequest: repository = 1, git_config_options = 2, git_protocol = 3.
func decodeUploadPackWithSidechannelRequest(b []byte) (*sshRequest, error) {
	fs, err := decodeFields(b)
	if err != nil {
		return nil, err
	}
	r := &sshRequest{}
	for _, f := range fs {
		if f.wire != wireBytes {
			continue
		}
		switch f.num {
		case 1:
			if r.repository, err = decodeRepository(f.bytes); err != nil {
				return nil, fmt.Errorf("repository: %v", err)
			}
		case 2:
			r.gitConfigOptions = append(r.gitConfigOptions, string(f.bytes))
		case 3:
			r.gitProtocol = string(f.bytes)
		}
	}
	return r, nil
}

// decodeReceivePackRequest: repository = 1, stdin = 2, gl_id = 3, gl_repository = 4,
// gl_username = 5, git_protocol = 6, git_config_options = 7.
// decodeUploadArchiveRequest uses the same function: its repository = 1 and stdin = 2 agree.
func decodeReceivePackRequest(b []byte) (*sshRequest, error) {
	fs, err := decodeFields(b)
	if err != nil {
		return nil, err
	}
	r := &sshRequest{}
	for _, f := range fs {
		if f.wire != wireBytes {
			continue
		}
		switch f.num {
		case 1:
			if r.repository, err = decodeRepository(f.bytes); err != nil {
				return nil, fmt.Errorf("repository: %v", err)
			}
		case 2:
			r.stdin = append(r.stdin, f.bytes...)
			r.hasStdin = r.hasStdin || len(f.bytes) > 0
		case 3:
			r.glID = string(f.bytes)
		case 4:
			r.glRepository = string(f.bytes)
		case 5:
			r.glUsername = string(f.bytes)
		case 6:
			r.gitProtocol = string(f.bytes)
		case 7:
			r.gitConfigOptions = append(r.gitConfigOptions, string(f.bytes))
		}
	}
	return r, nil
}

// Response messages of the bidi RPCs: stdout = 1, stderr = 2, exit_status = 3 (ExitStatus{value = 1}).
func stdoutResponse(p []byte) []byte { return appendBytesField(nil, 1, p) }
func stderrResponse(p []byte) []byte { return appendBytesField(nil, 2, p) }
func exitStatusResponse(code int32) []byte {
	var inner []byte
	if code != 0 {
		// int32 is encoded as a sign-extended 64-bit varint.
		inner = appendVarintField(nil, 1, uint64(int64(code)))
	}
	return appendBytesField(nil, 3, inner)
}

// rawMessage carries one gRPC message's bytes unchanged through rawCodec.
type rawMessage struct{ data []byte }

// rawCodec is the server codec: messages are never (un)marshalled by grpc-go, only passed through.
// It implements the old grpc.Codec interface that grpc.CustomCodec takes in grpc-go 1.33.
type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) {
	m, ok := v.(*rawMessage)
	if !ok {
		return nil, fmt.Errorf("rawCodec: cannot marshal %T", v)
	}
	return m.data, nil
}

func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	m, ok := v.(*rawMessage)
	if !ok {
		return fmt.Errorf("rawCodec: cannot unmarshal into %T", v)
	}
	m.data = append([]byte(nil), data...)
	return nil
}

func (rawCodec) String() string { return "proto" }
func (rawCodec) Name() string   { return "proto" }
