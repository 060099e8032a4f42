package main

// The "eager backchannel" of Gitaly before 17.11: right after the handshake the server dialled a
// gRPC connection back to the client, which opened yamux stream 2 and sent an HTTP/2 client
// preface on it. This file imitates only the wire part: it opens the stream, sends the preface
// and an empty SETTINGS frame, answers SETTINGS and PING like an HTTP/2 client, and logs
// whatever the client does with the stream (serve HTTP/2 on it, close it, reset it).

import (
	"github.com/hashicorp/yamux"
	"golang.org/x/net/http2"
)

func eagerBackchannel(sess *yamux.Session, tag string) {
	st, err := sess.OpenStream()
	if err != nil {
		logger.Printf("%s: eager backchannel: open stream: %v", tag, err)
		return
	}
	defer st.Close()
	id := st.StreamID()
	logger.Printf("%s: eager backchannel: opened yamux stream %d, sending HTTP/2 client preface", tag, id)
	if _, err := st.Write([]byte(http2.ClientPreface)); err != nil {
		logger.Printf("%s: eager backchannel stream %d: write preface: %v", tag, id, err)
		return
	}
	fr := http2.NewFramer(st, st)
	if err := fr.WriteSettings(); err != nil {
		logger.Printf("%s: eager backchannel stream %d: write SETTINGS: %v", tag, id, err)
		return
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			// EOF (client closed the stream) and resets are both acceptable client behaviour.
			logger.Printf("%s: eager backchannel stream %d ended: %v", tag, id, err)
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			logger.Printf("%s: eager backchannel stream %d: SETTINGS ack=%v", tag, id, f.IsAck())
			if !f.IsAck() {
				if err := fr.WriteSettingsAck(); err != nil {
					logger.Printf("%s: eager backchannel stream %d: write SETTINGS ack: %v", tag, id, err)
					return
				}
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = fr.WritePing(true, f.Data)
			}
		case *http2.GoAwayFrame:
			logger.Printf("%s: eager backchannel stream %d: GOAWAY code %v", tag, id, f.ErrCode)
		default:
			logger.Printf("%s: eager backchannel stream %d: frame %v", tag, id, f.Header().Type)
		}
	}
}
