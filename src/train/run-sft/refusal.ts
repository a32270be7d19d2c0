// Every refusal of `bench train run sft` past flag parsing: a flag combination, a missing file, a
// config that does not work. Upstream's launcher raises ValueError for each and its command exits
// 1 on it, so ours exits 1 too (scripts that check upstream's status keep working); 2 stays for
// what its CLI parser itself rejects (an unknown option, a missing --config, a non-integer count).
export class SftRefusal extends Error {
  override name = "SftRefusal";
}
