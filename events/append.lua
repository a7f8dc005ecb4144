#!lua
-- donjon's atomic append. Redis runs a script to completion with nothing in between, and the
-- shebang line makes it refuse to start (rather than stop half-way) when the server is out of
-- memory. Every check happens before the first write, because a script that fails after a write
-- keeps that write: no batch is ever half-applied.
--
-- KEYS[1] game:{ID}:events   the stream; entry id "<version>-0"; fields b (body), p, h
-- KEYS[2] game:{ID}:cmds     hash: command id -> "first,last"
-- ARGV[1] expected version, ARGV[2] command id ("" for none), ARGV[3] game:{ID}:live, the
-- sharded pub/sub channel (same slot; not a key, so not in KEYS: a name in KEYS that is never a
-- key would make a slot in migration answer TRYAGAIN to every append), ARGV[4] the links ("" for
-- SHA-1 games: the script hashes; else the service's SHA-256 chain: the stored head it builds on,
-- then each body's hash, 64 hex digits each), ARGV[5..] the bodies
--
-- Returns {"dup", first, last} when the command id was applied already (nothing appended, even if
-- the expected version is stale now), {"conflict", actual} when the stream is not at the expected
-- version, {"unlinked", actual} when the links do not start at the stored head, {"ok", first,
-- last} after appending every body.

local command_id = ARGV[2]
if command_id ~= "" then
  local done = redis.call("HGET", KEYS[2], command_id)
  if done then
    -- Written again, unchanged: a write that replicates after the original append, so that a
    -- WAIT after this reply (DONJON_DURABILITY=replica) covers the append it reports too.
    redis.call("HSET", KEYS[2], command_id, done)
    local comma = string.find(done, ",", 1, true)
    return {"dup", tonumber(string.sub(done, 1, comma - 1)), tonumber(string.sub(done, comma + 1))}
  end
end

local version = 0
local prev = "0000000000000000000000000000000000000000"
local last = redis.call("XREVRANGE", KEYS[1], "+", "-", "COUNT", 1)
if #last > 0 then
  local id = last[1][1]
  version = tonumber(string.sub(id, 1, string.find(id, "-", 1, true) - 1))
  local fields = last[1][2]
  prev = ""
  for i = 1, #fields, 2 do
    if fields[i] == "h" then prev = fields[i + 1] end
  end
end

if version ~= tonumber(ARGV[1]) then
  return {"conflict", version}
end

local count = #ARGV - 4
if count < 1 then
  return redis.error_reply("ERR donjon append: empty batch")
end

local links = ARGV[4]
if links == "" and #prev == 64 then
  return {"unlinked", version}
end
if links ~= "" then
  if #last == 0 then prev = string.rep("0", 64) end
  if #links ~= 64 * (count + 1) or string.sub(links, 1, 64) ~= prev then
    return {"unlinked", version}
  end
end

local carried, carried_bytes = {}, 0
for i = 1, count do
  local body = ARGV[i + 4]
  local hash
  if links == "" then hash = redis.sha1hex(prev .. body) else hash = string.sub(links, 64 * i + 1, 64 * i + 64) end
  redis.call("XADD", KEYS[1], (version + i) .. "-0", "b", body, "p", prev, "h", hash)
  carried[i] = {body, prev, hash}
  carried_bytes = carried_bytes + #body
  prev = hash
end

if command_id ~= "" then
  redis.call("HSET", KEYS[2], command_id, (version + 1) .. "," .. (version + count))
end
-- Last, the notice to the nodes watching the game: the new entries exactly as stored (msgpack
-- array of [body, prev, hash]), or only the new last version (a msgpack int) for a batch above
-- 64 KiB. A node uses carried entries only when they continue what it has shown; else it reads.
if ARGV[3] ~= "" then
  if carried_bytes <= 65536 then
    redis.call("SPUBLISH", ARGV[3], cmsgpack.pack(carried))
  else
    redis.call("SPUBLISH", ARGV[3], cmsgpack.pack(version + count))
  end
end
return {"ok", version + 1, version + count}
