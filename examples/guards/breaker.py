#!/usr/bin/env python3
"""WO-3's convergence breaker (seed 000) as an external guard, standard library only:
the starting point for porting a harness's own guard (docs/EVENTS.md, "Protocol").

    hindsight replay corpora/ --guard wo3="python3 examples/guards/breaker.py"

Rounds of one (agent, family) count its failures; a success of the family (or of a call
implying it) clears it; a file written or a package installed since its last failure
restarts it at 1. Stalled (3) advises, abandon (5) ends the main agent's run. Settings
(`stalled`, `abandon`) come in the hello; everything the project's next session starts
with goes back to hindsight as the done marker's `state` and comes back in `run_start`.
"""
import json
import sys

class Breaker:
    def __init__(self, settings):
        self.stalled = settings.get("stalled", 3)
        self.abandon = settings.get("abandon", 5)
        self.restore(None)

    def restore(self, state):
        """A run starts from the state the project's previous run ended with (or none)."""
        state = state or {"tracks": [], "mutations": {}}
        # (agent, family) -> [rounds, mutations at the last failure, tier reported (0, 1, 2)]
        self.tracks = {(a, f): [r, m, t] for a, f, r, m, t in state["tracks"]}
        self.mutations = dict(state["mutations"])
        self.firings = []

    def state(self):
        tracks = [[a, f, *t] for (a, f), t in sorted(self.tracks.items())]
        return {"tracks": tracks, "mutations": self.mutations}

    def carry(self):
        name = lambda a, f: f if a == "main" else f"{a}: {f}"
        return [{"family": name(a, f), "rounds": t[0]} for (a, f), t in self.tracks.items() if t[0] > 0]

    def result(self, r):
        agent, family = r["agent"], r["family"]
        if r["mutation"] or r["environment"]:
            self.mutations[agent] = self.mutations.get(agent, 0) + 1
        if r["success"]:
            signal = r.get("signal") or {}
            reports = signal.get("count", 0) > 0 or (signal.get("reported") or 0) > 0
            if not (r["verification"] and reports):
                for f in [family, *r["implies"]]:
                    self.tracks.pop((agent, f), None)
            return
        seen = self.mutations.get(agent, 0)
        track = self.tracks.setdefault((agent, family), [0, 0, 0])
        if track[0] > 0 and seen > track[1]:
            track[0], track[2] = 1, 0  # progress since the last failure: a new trajectory
        else:
            track[0] += 1
        track[1] = seen
        tier = 2 if track[0] >= self.abandon else 1 if track[0] >= self.stalled else 0
        if tier > track[2]:
            track[2] = tier
            action = "abandon" if tier == 2 else "stalled"
            # A sub-agent's abandon ends only the sub-agent: advisory for the run.
            effect = "terminal" if tier == 2 and agent == "main" else "advisory"
            self.firings.append({"type": "firing", "turn": r["turn"], "agent": agent,
                                 "action": action, "effect": effect, "family": family,
                                 "detail": f"{track[0]} rounds"})


def main():
    breaker = None
    for line in sys.stdin:
        event = json.loads(line)
        kind = event["type"]
        if kind == "hello":
            breaker = Breaker(event["settings"])
        elif kind == "run_start":
            breaker.restore(event.get("state"))
        elif kind == "tool_result":
            breaker.result(event)
        elif kind == "run_end":
            for firing in breaker.firings:
                print(json.dumps(firing))
            done = {"type": "done", "state": breaker.state(), "carry": breaker.carry()}
            print(json.dumps(done), flush=True)


if __name__ == "__main__":
    main()
