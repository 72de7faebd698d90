-- Deals: each connection deals one game for each of its own players in turn (a player has one
-- game in progress at most, so the data file holds more players than the phase can reach).
dofile(os.getenv("BENCH_LUA") .. "/common.lua")
function init(args)
  tokens = own_line()
  next_player = 0
  body = '{"variant": "vegas-draw3", "stake": 520}'
end

function request()
  next_player = next_player % #tokens + 1
  return wrk.format("POST", "/v1/games", {["Authorization"] = "Bearer " .. tokens[next_player],
    ["Content-Type"] = "application/json"}, body)
end

function response(status, headers, body)
  count_failure(status, body)
end
