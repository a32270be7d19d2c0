import { InvalidArgumentError } from "commander";

export function parseInteger(value: string): number {
  if (!/^-?\d+$/.test(value.trim()))
    throw new InvalidArgumentError(`expected a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

export function parseKeyValue(value: string, previous: Record<string, string>): Record<string, string> {
  const i = value.indexOf("=");
  if (i <= 0) throw new InvalidArgumentError(`expected KEY=VALUE, got ${JSON.stringify(value)}`);
  return { ...previous, [value.slice(0, i)]: value.slice(i + 1) };
}
