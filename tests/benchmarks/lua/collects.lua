-- Collects: each connection collects the games its players were dealt, one request each.
dofile(os.getenv("BENCH_LUA") .. "/common.lua")
function init(args)
  words = own_line()  -- token game token game ...
  next_game = 0
end

function request()
  next_game = next_game % (#words / 2) + 1
  return wrk.format("POST", "/v1/games/" .. words[2 * next_game] .. "/collect",
    {["Authorization"] = "Bearer " .. words[2 * next_game - 1]}, nil)
end

function response(status, headers, body)
  count_failure(status, body)
end
