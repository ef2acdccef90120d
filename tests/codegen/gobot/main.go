// A minimal Medina bot in Go, written from proto/medina/v1 alone: the code protoc-gen-go and
// protoc-gen-go-grpc generate, and grpc-go. It plays one seat to the end of the match by
// answering every decision request with the first legal placement (a tea break when it is
// the only choice), then prints one line, "match over: seat N: POINTS (rank R of P)".
//
//	gobot --server HOST:PORT [--name NAME]     (the seat token in MEDINA_TOKEN)
//
// tests/test_codegen.py builds it with the recipe of docs/codegen.md and plays it against a real
// server; `medina-arena match --bot "./gobot"` runs it the same way.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	medinav1 "example.com/medina/gen/go/medina/v1"
	"google.golang.org/grpc"
)

// choose answers a request: the first legal square of the first legal placement.
func choose(legal *medinav1.LegalActions) (*medinav1.Action, error) {
	for _, p := range legal.GetPlacements() {
		if len(p.GetSquares()) > 0 {
			return &medinav1.Action{Kind: p.GetKind(), Square: p.GetSquares()[0], Colour: p.GetColour()}, nil
		}
	}
	if legal.GetTea() {
		return &medinav1.Action{Kind: medinav1.ActionKind_ACTION_KIND_TEA}, nil
	}
	return nil, fmt.Errorf("a request with no legal action")
}

func play(server, token, name string) error {
	dialCtx, cancelDial := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelDial()
	conn, err := grpc.DialContext(dialCtx, server, grpc.WithInsecure(), grpc.WithBlock())
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", server, err)
	}
	defer conn.Close()
	stream, err := medinav1.NewArenaServiceClient(conn).Play(context.Background())
	if err != nil {
		return fmt.Errorf("opening Play: %w", err)
	}
	hello := &medinav1.Hello{ProtocolVersion: 1, BotName: name, BotVersion: "1", Token: token}
	if err := stream.Send(&medinav1.PlayRequest{Message: &medinav1.PlayRequest_Hello{Hello: hello}}); err != nil {
		return fmt.Errorf("sending Hello: %w", err)
	}
	seat := int32(-1)
	for {
		in, err := stream.Recv()
		if err == io.EOF {
			return fmt.Errorf("the stream ended before MatchEnded")
		}
		if err != nil {
			return fmt.Errorf("receiving: %w", err)
		}
		switch m := in.GetMessage().(type) {
		case *medinav1.PlayResponse_Welcome:
			seat = m.Welcome.GetSeat()
			fmt.Fprintf(os.Stderr, "welcome: match %s, seat %d\n", m.Welcome.GetMatchId(), seat)
		case *medinav1.PlayResponse_Request:
			action, err := choose(m.Request.GetLegal())
			if err != nil {
				return err
			}
			reply := &medinav1.Reply{RequestId: m.Request.GetRequestId(), Action: action}
			if err := stream.Send(&medinav1.PlayRequest{Message: &medinav1.PlayRequest_Reply{Reply: reply}}); err != nil {
				return fmt.Errorf("sending Reply: %w", err)
			}
			fmt.Fprintf(os.Stderr, "request %d: %s %d\n", reply.GetRequestId(), action.GetKind(), action.GetSquare())
		case *medinav1.PlayResponse_Rejected:
			return fmt.Errorf("reply to request %d refused: %s", m.Rejected.GetRequestId(), m.Rejected.GetMessage())
		case *medinav1.PlayResponse_Notice:
			fmt.Fprintf(os.Stderr, "notice: %s %s\n", m.Notice.GetCode(), m.Notice.GetMessage())
		case *medinav1.PlayResponse_Update:
			// Other seats' moves; this bot only looks at its requests.
		case *medinav1.PlayResponse_Ended:
			for _, s := range m.Ended.GetResult().GetSeats() {
				if s.GetSeat() == seat {
					fmt.Printf("match over: seat %d: %d (rank %d of %d)\n",
						seat, s.GetTotal(), s.GetRank(), len(m.Ended.GetResult().GetSeats()))
				}
			}
			stream.CloseSend()
			return nil
		}
	}
}

func main() {
	server := flag.String("server", os.Getenv("MEDINA_SERVER"), "HOST:PORT of the arena")
	name := flag.String("name", "go-first-legal", "bot name")
	flag.Parse()
	token := os.Getenv("MEDINA_TOKEN")
	if *server == "" || token == "" {
		fmt.Fprintln(os.Stderr, "usage: gobot --server HOST:PORT (seat token in MEDINA_TOKEN)")
		os.Exit(2)
	}
	if err := play(*server, token, *name); err != nil {
		fmt.Fprintln(os.Stderr, "gobot:", err)
		os.Exit(1)
	}
}
