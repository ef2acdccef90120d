// A minimal ladder bot in Go, written from proto/ and docs/protocol.md ("The ladder"): it
// opens LadderService.Lobby with its bot key, echoes every heartbeat, plays each
// MatchAssigned on an ArenaService.Play stream with the first legal action (resuming a
// broken stream), reconnects the lobby unless told to stop, and once --matches matches
// ended it sends Leave with its next heartbeat echo and exits 0 when the ladder closes the
// lobby (OK).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	medinav1 "example.com/medina/gen/go/medina/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Lobby endings that a reconnect would meet again (docs/protocol.md, "The ladder").
var final = map[string]bool{"BOT_KEY_INVALID": true, "BOT_REVOKED": true, "BOT_SUSPENDED": true,
	"LOBBY_HELLO_INVALID": true, "HELLO_MISSING": true}

// Play stream endings after which resuming cannot help (docs/protocol.md, "Errors").
var over = map[string]bool{"MATCH_OVER": true, "SEAT_FORFEITED": true, "SEAT_TOKEN_UNKNOWN": true,
	"PROTOCOL_VERSION_UNSUPPORTED": true, "WORKER_LOST": true, "SHUTTING_DOWN": true}

func reason(err error) string {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.Reason
		}
	}
	return ""
}

type bot struct {
	server, key, version string
	matches              int
	mu                   sync.Mutex
	ended, echoed        int
	playing              map[string]bool
	plays                sync.WaitGroup
}

func main() {
	b := &bot{key: os.Getenv("MEDINA_BOT_KEY"), playing: map[string]bool{}}
	flag.StringVar(&b.server, "server", "127.0.0.1:50061", "the ladder's lobby (host:port)")
	flag.StringVar(&b.version, "bot-version", "go-ladder", "LobbyHello.bot_version")
	flag.IntVar(&b.matches, "matches", 2, "leave once this many matches ended")
	flag.Parse()
	for backoff := 100 * time.Millisecond; ; backoff *= 2 {
		err := b.lobby()
		if err == nil {
			b.plays.Wait()
			fmt.Printf("left after %d matches, %d heartbeats echoed\n", b.ended, b.echoed)
			return
		}
		log.Printf("lobby ended: %v (%s)", err, reason(err))
		if final[reason(err)] || backoff > 5*time.Second {
			os.Exit(1)
		}
		time.Sleep(backoff)
	}
}

// lobby runs one lobby stream: nil when the ladder closed it OK after our Leave.
func (b *bot) lobby() error {
	conn, err := grpc.Dial(b.server, grpc.WithInsecure())
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(metadata.AppendToOutgoingContext(context.Background(),
		"authorization", "Bearer "+b.key))
	defer cancel()
	stream, err := medinav1.NewLadderServiceClient(conn).Lobby(ctx)
	if err != nil {
		return err
	}
	one := uint32(1)
	hello := &medinav1.LobbyHello{ProtocolVersion: 1, ProtocolMinor: 1, BotVersion: b.version,
		MaxMatches: &one, Client: "tests/codegen/goladder"}
	if err := stream.Send(&medinav1.LobbyRequest{Kind: &medinav1.LobbyRequest_Hello{Hello: hello}}); err != nil {
		return err
	}
	left := false
	for {
		msg, err := stream.Recv()
		if err == io.EOF && left {
			return nil
		} else if err == io.EOF {
			return fmt.Errorf("the lobby closed without our Leave")
		} else if err != nil {
			return err
		}
		switch k := msg.Kind.(type) {
		case *medinav1.LobbyResponse_Welcome:
			log.Printf("welcome: %s %q, heartbeat every %d ms", k.Welcome.Bot, k.Welcome.BotVersion,
				k.Welcome.HeartbeatIntervalMs)
		case *medinav1.LobbyResponse_Heartbeat:
			beat := &medinav1.Heartbeat{Sequence: k.Heartbeat.Sequence}
			if err := stream.Send(&medinav1.LobbyRequest{Kind: &medinav1.LobbyRequest_Heartbeat{Heartbeat: beat}}); err != nil {
				return err
			}
			b.echoed++
			if b.ended >= b.matches && !left {
				left = true
				if err := stream.Send(&medinav1.LobbyRequest{Kind: &medinav1.LobbyRequest_Leave{Leave: &medinav1.Leave{}}}); err != nil {
					return err
				}
			}
		case *medinav1.LobbyResponse_Match:
			b.mu.Lock()
			again := b.playing[k.Match.MatchId] // sent again after a reconnect
			b.playing[k.Match.MatchId] = true
			b.mu.Unlock()
			if !again {
				b.plays.Add(1)
				go b.play(k.Match)
			}
		case *medinav1.LobbyResponse_Ended:
			b.ended++
			log.Printf("match %s ended, rated %v", k.Ended.MatchId, k.Ended.Rated)
		}
	}
}

// play plays one seat to MatchEnded, resuming with the resume token after a broken stream.
func (b *bot) play(m *medinav1.MatchAssigned) {
	defer b.plays.Done()
	defer func() { b.mu.Lock(); delete(b.playing, m.MatchId); b.mu.Unlock() }()
	address := m.Address
	if address == "" {
		address = b.server
	}
	resume := ""
	for attempt := 0; attempt < 10; attempt++ {
		err := b.playStream(address, m, &resume)
		if err == nil || over[reason(err)] {
			return
		}
		log.Printf("match %s: %v; resuming", m.MatchId, err)
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
}

func (b *bot) playStream(address string, m *medinav1.MatchAssigned, resume *string) error {
	conn, err := grpc.Dial(address, grpc.WithInsecure())
	if err != nil {
		return err
	}
	defer conn.Close()
	stream, err := medinav1.NewArenaServiceClient(conn).Play(context.Background())
	if err != nil {
		return err
	}
	hello := &medinav1.Hello{ProtocolVersion: 1, ProtocolMinor: 1, BotName: "go-ladder",
		BotVersion: b.version, Token: m.Token, ResumeToken: *resume, OmitUpdates: true}
	if err := stream.Send(&medinav1.PlayRequest{Message: &medinav1.PlayRequest_Hello{Hello: hello}}); err != nil {
		return err
	}
	for {
		msg, err := stream.Recv()
		if err != nil {
			if err == io.EOF {
				return fmt.Errorf("the Play stream closed before MatchEnded")
			}
			return err
		}
		switch k := msg.Message.(type) {
		case *medinav1.PlayResponse_Welcome:
			*resume = k.Welcome.ResumeToken
		case *medinav1.PlayResponse_Request:
			action := firstLegal(k.Request.Legal)
			reply := &medinav1.Reply{RequestId: k.Request.RequestId, Action: action}
			if err := stream.Send(&medinav1.PlayRequest{Message: &medinav1.PlayRequest_Reply{Reply: reply}}); err != nil {
				return err
			}
		case *medinav1.PlayResponse_Ended:
			stream.CloseSend() // then read the status: the server's clean end
			for {
				if _, err := stream.Recv(); err != nil {
					return nil
				}
			}
		}
	}
}

func firstLegal(legal *medinav1.LegalActions) *medinav1.Action {
	for _, p := range legal.GetPlacements() {
		if len(p.Squares) > 0 {
			return &medinav1.Action{Kind: p.Kind, Square: p.Squares[0], Colour: p.Colour}
		}
	}
	return &medinav1.Action{Kind: medinav1.ActionKind_ACTION_KIND_TEA}
}
