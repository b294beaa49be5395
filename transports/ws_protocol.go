package transports

// transportProtocol is graphql-transport-ws, as the graphql-ws project's PROTOCOL.md specifies.
type transportProtocol struct{}

func (transportProtocol) resultType() string { return "next" }

// keepAlive sends nothing: liveness uses websocket ping frames, which every client answers.
func (transportProtocol) keepAlive(*conn) {}

func (p transportProtocol) handle(c *conn, data []byte) {
	msg, err := decodeInbound(data)
	if err != nil {
		c.close(CloseBadRequest, "Invalid message received: "+err.Error())
		return
	}
	switch msg.Type {
	case "connection_init":
		p.init(c, msg)
	case "ping", "pong":
		p.pingPong(c, msg)
	case "subscribe":
		p.subscribe(c, msg)
	case "complete":
		id, err := messageID(msg)
		if err != nil {
			c.close(CloseBadRequest, err.Error())
			return
		}
		c.stopOperation(id, false)
	default:
		c.close(CloseBadRequest, "Unexpected message of type "+msg.Type+" received")
	}
}

func (transportProtocol) init(c *conn, msg inbound) {
	payload, err := optionalObject(msg.Payload)
	if err != nil {
		c.close(CloseBadRequest, "connection_init payload must be an object")
		return
	}
	if c.initReceived {
		c.close(CloseTooManyInits, "Too many initialisation requests")
		return
	}
	c.initReceived = true
	if !c.authorise(payload) {
		c.close(CloseForbidden, "Forbidden")
	}
}

// pingPong answers a ping with a pong carrying the same payload; a pong needs no answer.
func (transportProtocol) pingPong(c *conn, msg inbound) {
	if _, err := optionalObject(msg.Payload); err != nil {
		c.close(CloseBadRequest, msg.Type+" payload must be an object")
		return
	}
	if msg.Type == "ping" {
		c.send(mustEncode("", "pong", rawOrNil(msg.Payload)))
	}
}

func (transportProtocol) subscribe(c *conn, msg inbound) {
	id, err := messageID(msg)
	if err != nil {
		c.close(CloseBadRequest, err.Error())
		return
	}
	params, err := decodeParams(msg.Payload)
	if err != nil {
		c.close(CloseBadRequest, err.Error())
		return
	}
	switch {
	case !c.acked.Load():
		c.close(CloseUnauthorized, "Unauthorized")
	case c.operationRunning(id):
		c.close(CloseDuplicateID, "Subscriber for "+id+" already exists")
	case c.rejectOverLimit(id), c.rejectByLimiter(id):
	default:
		c.startOperation(id, params)
	}
}

// authorise runs InitFunc and, when it accepts, acknowledges the connection.
func (c *conn) authorise(payload map[string]any) bool {
	base := c.ctx
	var ack *map[string]any
	if c.cfg.InitFunc != nil {
		ctx, ackPayload, err := c.cfg.InitFunc(c.ctx, payload)
		if err != nil {
			c.initError = err
			return false
		}
		if ctx != nil {
			base = ctx
		}
		ack = ackPayload
	}
	c.opBase = base
	c.watchLifetime(base)
	var ackBody any
	if ack != nil {
		ackBody = *ack
	}
	c.send(mustEncode("", "connection_ack", ackBody))
	c.acked.Store(true)
	c.extendReadDeadline()
	return true
}

// rawOrNil keeps a payload verbatim, or nil when the client sent none.
func rawOrNil(raw []byte) any {
	if isAbsent(raw) {
		return nil
	}
	return rawJSON(raw)
}

type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// legacyProtocol is subscriptions-transport-ws's graphql-ws, for clients that predate
// graphql-transport-ws. Its looser rules answer mistakes with error messages, not closes.
type legacyProtocol struct{}

func (legacyProtocol) resultType() string { return "data" }

func (legacyProtocol) keepAlive(c *conn) { c.trySend(mustEncode("", "ka", nil)) }

func (p legacyProtocol) handle(c *conn, data []byte) {
	msg, err := decodeInbound(data)
	if err != nil {
		c.refuse("", "connection_error", codedf(CodeBadRequest, "invalid message: %v", err))
		return
	}
	switch msg.Type {
	case "connection_init":
		p.init(c, msg)
	case "start":
		p.start(c, msg)
	case "stop":
		if id, err := messageID(msg); err == nil {
			c.stopOperation(id, true)
		}
	case "connection_terminate":
		c.close(1000, "terminated")
	default:
		c.refuse(idOf(msg), "error", codedf(CodeBadRequest, "invalid message type %q", msg.Type))
	}
}

func (legacyProtocol) init(c *conn, msg inbound) {
	if c.initReceived {
		c.refuse("", "connection_error", codedf(CodeBadRequest, "connection already initialised"))
		return
	}
	payload, err := optionalObject(msg.Payload)
	if err != nil {
		c.refuse("", "connection_error", codedf(CodeBadRequest, "connection_init payload must be an object"))
		return
	}
	c.initReceived = true
	if !c.authorise(payload) {
		c.refuse("", "connection_error", asGraphQLError(c.initError, "FORBIDDEN"))
		c.close(CloseForbidden, "Forbidden")
		return
	}
	c.send(mustEncode("", "ka", nil))
}

func (legacyProtocol) start(c *conn, msg inbound) {
	if !c.acked.Load() {
		c.close(CloseUnauthorized, "Unauthorized")
		return
	}
	id, err := messageID(msg)
	if err != nil {
		c.refuse("", "connection_error", codedf(CodeBadRequest, "%s", err.Error()))
		return
	}
	params, err := decodeParams(msg.Payload)
	if err != nil {
		c.refuse(id, "error", codedf(CodeBadRequest, "%s", err.Error()))
		return
	}
	// subscriptions-transport-ws replaces an operation whose id is reused.
	c.stopOperation(id, false)
	if !c.rejectOverLimit(id) && !c.rejectByLimiter(id) {
		c.startOperation(id, params)
	}
}

func idOf(msg inbound) string {
	id, _ := messageID(msg)
	return id
}
