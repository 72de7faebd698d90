-- Plays: each connection draws through its own Klondike game (draw three, unlimited passes)
-- and turns the waste over when the stock runs out, forever: every request is a command.
dofile(os.getenv("BENCH_LUA") .. "/common.lua")
function init(args)
  local words = own_line()
  auth = "Bearer " .. words[1]
  game = words[2]
  action = nil  -- the first request reads the game, to know whether the stock is empty
end

function request()
  if action == nil then
    return wrk.format("GET", "/v1/games/" .. game, {["Authorization"] = auth}, nil)
  end
  return wrk.format("POST", "/v1/games/" .. game .. "/" .. action,
    {["Authorization"] = auth}, nil)
end

function response(status, headers, body)
  count_failure(status, body)
  -- Plain finds (no patterns): the client's work per answer stays small beside the server's.
  if body:find('"stock_count":0,', 1, true) or body:find('"stock_count":0}', 1, true)
      or body:find("stock-empty", 1, true) then
    action = "recycle"
  else
    action = "draw"
  end
end
