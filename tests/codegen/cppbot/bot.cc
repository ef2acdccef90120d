// A minimal Medina bot in C++, written from proto/medina/v1 alone: the code protoc and
// grpc_cpp_plugin generate, and gRPC C++ (Debian's libgrpc++-dev). It plays one seat to the
// end of the match by answering every decision request with the first legal placement (a
// tea break when it is the only choice), then prints one line,
// "match over: seat N: POINTS (rank R of P)".
//
//   cppbot --server HOST:PORT [--name NAME]     (the seat token in MEDINA_TOKEN)
//
// tests/test_codegen.py builds it with the recipe of docs/codegen.md and plays it against a
// real server; `medina-arena match --bot ./cppbot` runs it the same way.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "medina/v1/arena.grpc.pb.h"

namespace v1 = medina::v1;

// The first legal square of the first legal placement; a tea break when only that is legal.
std::optional<v1::Action> choose(const v1::LegalActions& legal) {
  for (const auto& p : legal.placements()) {
    if (p.squares_size() > 0) {
      v1::Action action;
      action.set_kind(p.kind());
      action.set_square(p.squares(0));
      action.set_colour(p.colour());
      return action;
    }
  }
  if (legal.tea()) {
    v1::Action action;
    action.set_kind(v1::ACTION_KIND_TEA);
    return action;
  }
  return std::nullopt;
}

int play(const std::string& server, const std::string& token, const std::string& name) {
  auto channel = grpc::CreateChannel(server, grpc::InsecureChannelCredentials());
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    std::cerr << "cppbot: cannot connect to " << server << "\n";
    return 1;
  }
  auto stub = v1::ArenaService::NewStub(channel);
  grpc::ClientContext context;
  auto stream = stub->Play(&context);
  v1::PlayRequest hello;
  hello.mutable_hello()->set_protocol_version(1);
  hello.mutable_hello()->set_bot_name(name);
  hello.mutable_hello()->set_bot_version("1");
  hello.mutable_hello()->set_token(token);
  if (!stream->Write(hello)) {
    std::cerr << "cppbot: sending Hello failed\n";
    return 1;
  }
  int seat = -1;
  v1::PlayResponse in;
  while (stream->Read(&in)) {
    switch (in.message_case()) {
      case v1::PlayResponse::kWelcome:
        seat = in.welcome().seat();
        std::cerr << "welcome: match " << in.welcome().match_id() << ", seat " << seat << "\n";
        break;
      case v1::PlayResponse::kRequest: {
        auto action = choose(in.request().legal());
        if (!action) {
          std::cerr << "cppbot: a request with no legal action\n";
          return 1;
        }
        v1::PlayRequest reply;
        reply.mutable_reply()->set_request_id(in.request().request_id());
        *reply.mutable_reply()->mutable_action() = *action;
        if (!stream->Write(reply)) {
          std::cerr << "cppbot: sending Reply failed\n";
          return 1;
        }
        std::cerr << "request " << in.request().request_id() << ": "
                  << v1::ActionKind_Name(action->kind()) << " " << action->square() << "\n";
        break;
      }
      case v1::PlayResponse::kRejected:
        std::cerr << "cppbot: reply to request " << in.rejected().request_id()
                  << " refused: " << in.rejected().message() << "\n";
        return 1;
      case v1::PlayResponse::kNotice:
        std::cerr << "notice: " << v1::ErrorCode_Name(in.notice().code()) << " "
                  << in.notice().message() << "\n";
        break;
      case v1::PlayResponse::kEnded: {
        const auto& seats = in.ended().result().seats();
        for (const auto& s : seats) {
          if (s.seat() == seat) {
            std::cout << "match over: seat " << seat << ": " << s.total() << " (rank " << s.rank()
                      << " of " << seats.size() << ")" << std::endl;
          }
        }
        stream->WritesDone();  // leave cleanly: the server's OK follows
        grpc::Status status = stream->Finish();
        return status.ok() ? 0 : 1;
      }
      default:  // updates (other seats' moves) and what later versions add
        break;
    }
  }
  grpc::Status status = stream->Finish();
  std::cerr << "cppbot: the stream ended before MatchEnded: " << status.error_message() << "\n";
  return 1;
}

int main(int argc, char** argv) {
  const char* env_server = std::getenv("MEDINA_SERVER");
  const char* env_token = std::getenv("MEDINA_TOKEN");
  std::string server = env_server ? env_server : "";
  std::string name = "cpp-first-legal";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--server") server = argv[i + 1];
    if (flag == "--name") name = argv[i + 1];
  }
  if (server.empty() || env_token == nullptr || *env_token == '\0') {
    std::cerr << "usage: cppbot --server HOST:PORT (seat token in MEDINA_TOKEN)\n";
    return 2;
  }
  return play(server, env_token, name);
}
