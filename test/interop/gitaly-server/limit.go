package main

// -limit-error: answer chosen methods as an overloaded Gitaly does, with code Unavailable and a
// gitaly.LimitError status detail (errors.proto: error_message = 1,
// google.protobuf.Duration retry_after = 2). The detail is encoded by hand like every message here.

import (
	"strings"

	"github.com/golang/protobuf/ptypes/any"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// limitErrorMessage is the concurrency limiter's text in Gitaly.
const limitErrorMessage = "maximum queue size reached"

// limitErrorFor returns the LimitError status when -limit-error names the method (or "all").
func (s *server) limitErrorFor(method string) error {
	for _, m := range s.limitMethods {
		if m == "all" || strings.EqualFold(m, method) {
			detail := appendBytesField(nil, 1, []byte(limitErrorMessage))
			// retry_after = Duration{seconds = 1}
			detail = appendBytesField(detail, 2, appendVarintField(nil, 1, 1))
			st := &spb.Status{
				Code:    int32(codes.Unavailable),
				Message: limitErrorMessage,
				Details: []*any.Any{{TypeUrl: "type.googleapis.com/gitaly.LimitError", Value: detail}},
			}
			logger.Printf("%s: -limit-error: answering Unavailable with a LimitError detail", method)
			return status.ErrorProto(st)
		}
	}
	return nil
}
