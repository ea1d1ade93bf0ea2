/**
 * Every service svc runs, in the order `svc up` starts them. Each gets `svc <name>`. A service
 * module exports the result of defineService() (src/service.ts); adding one is one line here.
 */
import { brokerService } from "./broker/service.ts";
import { crmService } from "./crm/service.ts";
import { kvService } from "./kv/service.ts";
import { mediaService } from "./media/service.ts";
import type { Service } from "./service.ts";

export const services: Service[] = [kvService, brokerService, crmService, mediaService];
