import type { ProtocolChecks } from "../plugin/supervisor.js";
import { methodDefs, schemaDigest, seamMethods, validate, validator } from "./schema.js";

// The schema, seen from the supervisor: an answer whose shape breaks the
// schema is an invalid message (the plugin is broken for the invocation),
// not merely a failed reply check. A plugin that cannot keep to the schema
// cannot be trusted to mean what its other fields say.

export function protocolChecks(): ProtocolChecks {
  return {
    digest: schemaDigest,
    prepare(needs) {
      schemaDigest();
      validator("method.initialize.result");
      for (const seam of needs) {
        for (const method of seamMethods(seam)) {
          const result = methodDefs(method)?.result;
          if (result) validator(result);
        }
      }
    },
    initializeErrors(result) {
      const v = validate("method.initialize.result", result);
      return v.ok ? [] : v.errors;
    },
    checkResult(method, result) {
      // The handshake is judged by the load rules, which name what is wrong.
      if (method === "initialize") return null;
      const defs = methodDefs(method);
      if (!defs?.result) return `mu never asked for '${method}'`;
      const v = validate(defs.result, result);
      return v.ok ? null : v.errors.join("; ");
    },
    checkNotification(method, params) {
      const v = validate(`notification.${method.replace("/", ".")}.params`, params);
      return v.ok ? null : v.errors.join("; ");
    },
  };
}
