// How many times one gossip message is sent before it leaves the queue: retransmitMult * ceil(log10(n+1))
// (hashicorp/memberlist util.go `retransmitLimit`). With the LAN default retransmitMult 4 a message reaches
// every member with high probability (SWIM section 4.1, infection-style dissemination).

export function retransmitLimit(retransmitMult: number, memberCount: number): number {
  const nodeScale = Math.ceil(Math.log10(Math.max(0, memberCount) + 1));
  return retransmitMult * nodeScale;
}
